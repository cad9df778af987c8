"""A real promptops package in git, a raw JSON-RPC client over real pipes, and the judge
that validates every server message against the official schema of its revision."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
from helpers.mcp_schema import _schema, validate  # type: ignore[import-not-found]
from helpers.repo import commit_files as commit  # noqa: F401  (the one copy; serve tests say commit)
from helpers.serve import ServeProcess, serve_cmd  # noqa: F401  (serve_cmd: tests import it here)

PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)
WAV = b"RIFF$\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00D\xac\x00\x00\x88X\x01\x00" \
      b"\x02\x00\x10\x00data\x00\x00\x00\x00"

REVIEW = """\
title: Code review
description: Review code
icons:
  - src: https://example.com/icon.png
    mimeType: image/png
arguments:
  - name: code
    title: Code
    description: The code to review
    required: true
    maxLength: 50
  - name: language
    required: true
    enum: [python, go, rust, Pascal]
  - name: style
    pattern: "[a-z0-9]+"
    examples: [pep8, google, pythonic]
    default: pep8
messages:
  - role: assistant
    template: partials/intro.j2
    annotations:
      audience: [assistant]
      priority: 0.5
      lastModified: "2025-01-01T00:00:00Z"
  - role: user
    text: "Review this {{ language }} code ({{ style }}):\\n{{ code }}"
"""

MEDIA = """\
description: Every content type
arguments:
  - name: topic
messages:
  - role: user
    image: {file: assets/pixel.png}
  - role: user
    audio: {file: assets/beep.wav}
  - role: user
    resource: {uri: "promptops://kit/notes/guide.md", file: notes/guide.md}
  - role: user
    resource: {uri: "note://{{ topic }}", mimeType: text/plain, text: "About {{ topic }}"}
  - role: assistant
    resource_link: {uri: "https://example.com/{{ topic }}", name: docs, title: The docs,
                    description: Read these, mimeType: text/html}
"""

BROKEN = """\
description: renders badly
messages:
  - role: user
    text: "{{ 1 / 0 }}"
"""


def kit_files(extra_prompts: int = 12) -> dict[str, str | bytes]:
    files: dict[str, str | bytes] = {
        "promptops.yaml": "name: kit\nversion: 1.2.3\ninstructions: Use code_review for reviews.\n",
        "prompts/code_review.prompt.yaml": REVIEW,
        "prompts/media.prompt.yaml": MEDIA,
        "prompts/broken.prompt.yaml": BROKEN,
        "partials/intro.j2": "You are a careful reviewer.",
        "assets/pixel.png": PNG,
        "assets/beep.wav": WAV,
        "notes/guide.md": "# Guide\nBe kind.\n",
    }
    for i in range(extra_prompts):
        files[f"prompts/p{i:02d}.prompt.yaml"] = (
            f"description: filler {i}\nmessages:\n  - role: user\n    text: filler {i}\n"
        )
    return files


RESULTS = {
    "initialize": "InitializeResult", "prompts/list": "ListPromptsResult",
    "prompts/get": "GetPromptResult", "completion/complete": "CompleteResult",
    "resources/list": "ListResourcesResult", "resources/read": "ReadResourceResult",
    "resources/templates/list": "ListResourceTemplatesResult",
    "server/discover": "DiscoverResult", "subscriptions/listen": "SubscriptionsListenResult",
    "tools/list": "ListToolsResult", "tools/call": "CallToolResult",
}
NOTIFICATIONS = {
    "notifications/prompts/list_changed": "PromptListChangedNotification",
    "notifications/message": "LoggingMessageNotification",
    "notifications/subscriptions/acknowledged": "SubscriptionsAcknowledgedNotification",
    "notifications/tools/list_changed": "ToolListChangedNotification",
}


def _defs(revision: str) -> dict[str, Any]:
    s = _schema(revision)
    return s["$defs"] if "$defs" in s else s["definitions"]  # type: ignore[no-any-return]


def check_message(msg: Any, revision: str, method: str | None) -> None:
    """Validate one server message; ``method`` is that of the request it answers."""
    if isinstance(msg, list):
        assert revision == "2025-03-26", "batch reply outside 2025-03-26"
        validate(msg, "JSONRPCBatchResponse", revision)
        return
    new = revision >= "2025-11-25"
    if "error" in msg:
        if msg.get("id", 0) is None or ("id" not in msg and not new):
            # An unknown id: JSON-RPC 2.0's `"id": null` once the connection is on a revision
            # before 2025-11-25, or left out (the 2025-11-25 form) for an error the server sent
            # before any revision was chosen (a parse error ahead of `initialize`). The older
            # schemas can express neither, so the error object is checked on its own.
            assert not new
            sub = {"$schema": _schema(revision)["$schema"], "definitions": _defs(revision),
                   "$ref": "#/definitions/JSONRPCError/properties/error"}
            jsonschema.validators.validator_for(sub)(sub).validate(msg["error"])
            return
        validate(msg, "JSONRPCErrorResponse" if new else "JSONRPCError", revision)
        if msg["error"]["code"] == -32022:
            validate(msg, "UnsupportedProtocolVersionError", revision)
        return
    if "id" not in msg:
        validate(msg, "JSONRPCNotification", revision)
        validate(msg, NOTIFICATIONS[msg["method"]], revision)
        return
    validate(msg, "JSONRPCResultResponse" if new else "JSONRPCResponse", revision)
    result = msg["result"]
    if result.get("resultType") == "input_required":
        validate(result, "InputRequiredResult", revision)
    elif method in RESULTS:
        validate(result, RESULTS[method], revision)
    else:
        validate(result, "EmptyResult" if "EmptyResult" in _defs(revision) else "Result", revision)


class RawClient(ServeProcess):
    """A server subprocess driven by hand-written JSON-RPC lines; every reply is judged."""

    def __init__(self, args: list[str], revision: str, cwd: Path | None = None,
                 env: dict[str, str] | None = None) -> None:
        # stderr is the tests' to read (line by line, or whole at close)
        super().__init__(args, cwd=cwd, env={**os.environ, **env} if env else None,
                         drain_stderr=False)
        self.revision = revision
        self.methods: dict[Any, str] = {}
        self.seen: list[Any] = []
        self._next = 0
        # log notifications a request's reply overtook: the server sends them unasked (a
        # commit that does not build), so request() keeps them for recv() in order
        self._held: list[Any] = []

    def send(self, obj: Any) -> None:
        for m in obj if isinstance(obj, list) else [obj]:
            if isinstance(m, dict) and "id" in m and "method" in m:
                self.methods[json.dumps(m["id"])] = m["method"]
        self.write(json.dumps(obj).encode() + b"\n")

    def recv(self, timeout: float = 15) -> Any:
        if self._held:
            return self._held.pop(0)
        return self._judged(timeout)

    def _judged(self, timeout: float) -> Any:
        msg = self.next_message(timeout)
        method = None
        if isinstance(msg, dict) and "id" in msg:
            method = self.methods.get(json.dumps(msg["id"]))
        check_message(msg, self.revision, method)
        self.seen.append(msg)
        return msg

    def request(self, method: str, params: dict[str, Any] | None = None, **kw: Any) -> Any:
        self._next += 1
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": self._next, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        while True:
            reply = self._judged(kw.get("timeout", 15))
            if not (isinstance(reply, dict) and reply.get("method") == "notifications/message"):
                return reply
            self._held.append(reply)

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        self.send({"jsonrpc": "2.0", "method": method, **({"params": params} if params else {})})

    def initialize(self, version: str) -> Any:
        reply = self.request("initialize", {"protocolVersion": version, "capabilities": {},
                                            "clientInfo": {"name": "raw", "version": "1"}})
        self.notify("notifications/initialized")
        return reply

    def close(self) -> tuple[int, str]:  # type: ignore[override]
        rc = super().close()
        assert self.proc.stderr is not None
        return rc, self.proc.stderr.read().decode()


def envelope(caps: dict[str, Any] | None = None, version: str = "2026-07-28") -> dict[str, Any]:
    return {"_meta": {"io.modelcontextprotocol/protocolVersion": version,
                      "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
                      "io.modelcontextprotocol/clientCapabilities": caps or {}}}


def judge_log(path: Path) -> int:
    """Validate every server line of a tee.py log; returns how many were judged."""
    methods: dict[str, str] = {}
    revision, judged = "", 0
    for raw in path.read_bytes().splitlines():
        tag, msg = raw[:2], json.loads(raw[2:])
        if tag == b"C ":
            for m in msg if isinstance(msg, list) else [msg]:
                if "id" in m and "method" in m:
                    methods[json.dumps(m["id"])] = m["method"]
                    meta = (m.get("params") or {}).get("_meta") or {}
                    revision = meta.get("io.modelcontextprotocol/protocolVersion", revision)
            continue
        method = methods.get(json.dumps(msg.get("id"))) if isinstance(msg, dict) else None
        if method == "initialize" and "result" in msg:
            revision = msg["result"]["protocolVersion"]
        check_message(msg, revision or "2025-11-25", method)
        judged += 1
    return judged
