"""A small LSP client that drives the real yaml-language-server over its stdio pipes.

Editors are the judges of an editor schema, so the test talks to the server the way
VS Code's YAML extension does: JSON-RPC with ``Content-Length`` framing, answering the
requests the server sends back (``workspace/configuration`` and the registrations),
keeping the last ``publishDiagnostics`` of each document. Every wait is bounded and
the server is killed on close.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

YAML_LS_VERSION = "2.0.0"


class LspError(RuntimeError):
    """An error reply, or no reply in time."""


class YamlLanguageServer:
    def __init__(self, server_js: Path, root: Path, timeout: float = 30.0) -> None:
        self.timeout = timeout
        self.settings = {"yaml": {"validate": True, "hover": True, "completion": True,
                                  "schemaStore": {"enable": False}}}
        self.proc = subprocess.Popen(
            ["node", str(server_js), "--stdio"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=root,
            env={**os.environ, "NODE_NO_WARNINGS": "1"})
        self._cond = threading.Condition()
        self._write = threading.Lock()
        self._replies: dict[int, dict[str, Any]] = {}
        self._diagnostics: dict[str, tuple[int, list[dict[str, Any]]]] = {}
        self._id = 0
        threading.Thread(target=self._read_loop, daemon=True).start()
        self.request("initialize", {
            "processId": os.getpid(), "rootUri": root.as_uri(),
            "workspaceFolders": [{"uri": root.as_uri(), "name": "ws"}],
            "capabilities": {
                "workspace": {"configuration": True},
                "textDocument": {"hover": {"contentFormat": ["markdown", "plaintext"]},
                                 "completion": {"completionItem": {"snippetSupport": True}},
                                 "publishDiagnostics": {}}}})
        self.notify("initialized", {})
        self.notify("workspace/didChangeConfiguration", {"settings": self.settings})

    def __enter__(self) -> YamlLanguageServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        assert self.proc.stdin is not None
        with self._write:
            self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            self.proc.stdin.flush()

    def _read_loop(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    return
                if not line.strip():
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            if length is None:
                continue
            msg = json.loads(out.read(length))
            if "id" in msg and "method" in msg:  # a request from the server
                result = [self.settings.get(str(i.get("section", "")).split(".")[0], {})
                          for i in msg["params"].get("items", [])] \
                    if msg["method"] == "workspace/configuration" else None
                self._send({"jsonrpc": "2.0", "id": msg["id"], "result": result})
            elif "id" in msg:
                with self._cond:
                    self._replies[msg["id"]] = msg
                    self._cond.notify_all()
            elif msg.get("method") == "textDocument/publishDiagnostics":
                with self._cond:
                    seen = self._diagnostics.get(msg["params"]["uri"], (0, []))[0]
                    self._diagnostics[msg["params"]["uri"]] = (seen + 1,
                                                               msg["params"]["diagnostics"])
                    self._cond.notify_all()

    def request(self, method: str, params: Any) -> Any:
        self._id += 1
        rid = self._id
        self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        deadline = time.monotonic() + self.timeout
        with self._cond:
            while rid not in self._replies:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise LspError(f"no reply to {method} in {self.timeout} s")
                self._cond.wait(left)
            reply = self._replies.pop(rid)
        if "error" in reply:
            raise LspError(f"{method}: {reply['error']}")
        return reply.get("result")

    def notify(self, method: str, params: Any) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def open(self, path: Path) -> str:
        uri = path.as_uri()
        self.notify("textDocument/didOpen", {"textDocument": {
            "uri": uri, "languageId": "yaml", "version": 1,
            "text": path.read_text(encoding="utf-8")}})
        return uri

    def diagnostics(self, uri: str, settle: float = 1.0) -> list[dict[str, Any]]:
        """The diagnostics once the server has published and then been quiet for ``settle``
        seconds (syntax and schema diagnostics arrive in separate notifications)."""
        deadline = time.monotonic() + self.timeout
        with self._cond:
            while True:
                count = self._diagnostics.get(uri, (0, []))[0]
                if count and not self._cond.wait(settle):
                    if self._diagnostics[uri][0] == count:
                        return self._diagnostics[uri][1]
                elif not count:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise LspError(f"no diagnostics for {uri}")
                    self._cond.wait(min(left, settle))

    def hover(self, uri: str, line: int, character: int) -> str:
        got = self.request("textDocument/hover", {"textDocument": {"uri": uri},
                                                  "position": {"line": line,
                                                               "character": character}})
        if not got:
            return ""
        contents = got["contents"]
        return str(contents.get("value", "")) if isinstance(contents, dict) else str(contents)

    def completion(self, uri: str, line: int, character: int) -> list[str]:
        got = self.request("textDocument/completion", {"textDocument": {"uri": uri},
                                                       "position": {"line": line,
                                                                    "character": character}})
        items = got.get("items", []) if isinstance(got, dict) else (got or [])
        return [str(i["label"]) for i in items]

    def close(self) -> None:
        try:
            self.request("shutdown", None)
            self.notify("exit", None)
            self.proc.wait(timeout=5)
        except (LspError, OSError, subprocess.TimeoutExpired):
            pass
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait(timeout=5)


def position_of(text: str, needle: str) -> tuple[int, int]:
    """0-based (line, character) of the first ``needle`` in ``text``."""
    at = text.index(needle)
    line = text.count("\n", 0, at)
    return line, at - (text.rfind("\n", 0, at) + 1)
