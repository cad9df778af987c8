"""What `promptops serve` must answer to any one line, derived from docs/serve.md.

An independent model of the documented rules (not a call into the server's own code):
given the connection's state and the bytes of one line it says how many replies come
back, in which order, with which id and which error code - or which result, checked
against an in-process :class:`promptops.render.renderer.Renderer` of the same bundle. Both the
stdio fuzz driver and the hypothesis properties judge the server with it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from promptops.errors import RenderError
from promptops.render.mcp import error_code
from promptops.render.renderer import Renderer

MAX_LINE = 16 * 1024 * 1024
MAX_DEPTH = 100
MAX_VALUES = 100_000  # arrays, objects and the commas between their items
MAX_BATCH = 100
MODERN = "2026-07-28"
HANDSHAKE = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
HANDSHAKE_METHODS = {"initialize", "ping", "logging/setLevel", "prompts/list", "prompts/get",
                     "completion/complete", "resources/list", "resources/read",
                     "resources/templates/list"}
MODERN_METHODS = (HANDSHAKE_METHODS - {"initialize", "ping", "logging/setLevel"}) | {
    "server/discover", "subscriptions/listen"}
LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
NO_ID = object()  # the reply's id is unknown: omitted, or null on revisions < 2025-11-25
Check = Callable[[Any], "str | None"]


@dataclass
class Expect:
    """One expected reply: an error ``code`` or a ``result`` check, for ``id``."""

    id: Any
    code: int | None = None
    check: Check | None = None
    batch: list[Expect] | None = None
    anything: bool = False  # outside the model: any well-formed reply to this id
    null_id: bool = False  # for NO_ID: JSON-RPC's null (revisions before 2025-11-25)
    modern: bool = False  # answered in the 2026-07-28 era: results carry resultType
    method: str | None = None  # of the request answered (for the schema of its result)


@dataclass
class State:
    era: str | None = None
    revision: str | None = None
    notes: list[str] = field(default_factory=list)


class LongInt(str):
    """An integer id past Python's int-string limit: its digits (JSON-RPC allows any length)."""


def loads(text: str) -> Any:
    """JSON as the documented rules read it: no NaN/Infinity, integers of any length."""
    def constant(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")

    def integer(digits: str) -> Any:
        try:
            return int(digits)
        except ValueError:
            return LongInt(digits)

    return json.loads(text, parse_constant=constant, parse_int=integer)


def values(obj: Any) -> int:
    """Arrays and objects, plus the commas between their items (what MAX_VALUES counts)."""
    total, stack = 0, [obj]
    while stack:
        value = stack.pop()
        if isinstance(value, dict | list):
            items = list(value.values() if isinstance(value, dict) else value)
            total += 1 + max(len(items) - 1, 0)
            stack.extend(items)
    return total


def depth(obj: Any) -> int:
    """Nesting of arrays/objects, iteratively (the value may be deeper than the C stack)."""
    best, stack = 0, [(obj, 1)]
    while stack:
        value, d = stack.pop()
        if isinstance(value, dict | list):
            best = max(best, d)
            stack.extend((v, d + 1) for v in (value.values() if isinstance(value, dict)
                                                else value))
    return best


class Oracle:
    def __init__(self, bundle: dict[str, Any]) -> None:
        self.renderer = Renderer(bundle)
        self.names = sorted(p["name"] for p in bundle["prompts"])
        self.state = State()

    # ---- lines --------------------------------------------------------------------
    def line(self, data: bytes) -> list[Expect]:
        if len(data) > MAX_LINE:
            return self._ids([Expect(NO_ID, -32600)])
        if not data.strip():
            return []
        try:
            obj = loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            return self._ids([Expect(NO_ID, -32700)])
        if depth(obj) > MAX_DEPTH or values(obj) > MAX_VALUES:
            return self._ids([Expect(NO_ID, -32700)])
        return self._ids(self.message(obj))

    def _ids(self, expects: list[Expect]) -> list[Expect]:
        st = self.state
        null = st.era == "handshake" and (st.revision or "") < "2025-11-25"
        for e in expects:
            e.null_id, e.modern = null, st.era == "modern"
            self._ids(e.batch or [])
        return expects

    def message(self, obj: Any) -> list[Expect]:
        if not isinstance(obj, list):
            return self.one(obj, False)
        st = self.state
        if not (st.era == "handshake" and st.revision == "2025-03-26"):
            return [Expect(NO_ID, -32600)]
        if not obj or len(obj) > MAX_BATCH:
            return [Expect(NO_ID, -32600)]
        inner = [e for m in obj for e in self.one(m, True)]
        return [Expect(None, batch=inner)] if inner else []

    # ---- one message ----------------------------------------------------------------
    def one(self, msg: Any, in_batch: bool) -> list[Expect]:
        if not isinstance(msg, dict):
            return [Expect(NO_ID, -32600)]
        method, id_, params = msg.get("method"), msg.get("id"), msg.get("params", {})
        if msg.get("jsonrpc") != "2.0":  # answered to the id whenever it is a valid one
            return [Expect(id_ if valid_id(id_) else NO_ID, -32600)]
        if not isinstance(method, str):
            if "result" in msg or "error" in msg:
                return []
            return [Expect(id_ if valid_id(id_) else NO_ID, -32600)]
        if "id" not in msg:
            return []
        if not valid_id(id_):
            return [Expect(NO_ID, -32600)]
        if not isinstance(params, dict):
            return [Expect(id_, -32602)]
        if in_batch and method == "initialize":
            return [Expect(id_, -32600)]
        expect = self.request(method, params, id_)
        expect.method = method
        return [expect]

    def request(self, method: str, params: dict[str, Any], id_: Any) -> Expect:
        st = self.state
        meta = params.get("_meta")
        envelope = ("io.modelcontextprotocol/protocolVersion",
                    "io.modelcontextprotocol/clientCapabilities")
        # either key of the envelope opens the stateless era (docs/serve.md); other
        # io.modelcontextprotocol/ keys travel in session-era requests too
        modern = isinstance(meta, dict) and any(k in meta for k in envelope)
        if st.era is None:
            if modern or method == "server/discover":
                st.era = "modern"  # initialize with the envelope included: then -32601
            elif method == "initialize":
                st.era = "handshake"
            elif method == "ping":
                return Expect(id_, check=lambda r: None if r == {} else f"ping gave {r}")
            else:
                return Expect(id_, -32600)
        known = HANDSHAKE_METHODS if st.era == "handshake" else MODERN_METHODS
        if method not in known:
            return Expect(id_, -32601)
        if st.era == "modern":
            if not isinstance(meta, dict):
                return Expect(id_, -32602)
            keys = ("io.modelcontextprotocol/protocolVersion",
                    "io.modelcontextprotocol/clientCapabilities")
            if any(k not in meta for k in keys):
                return Expect(id_, -32602)
            if meta[keys[0]] != MODERN:
                return Expect(id_, -32022)
            if not isinstance(meta[keys[1]], dict):
                return Expect(id_, -32602)
            if "elicitation" in meta[keys[1]]:  # MRTR is outside the model
                return Expect(id_, anything=True)
        return self.method(method, params, id_)

    def method(self, method: str, params: dict[str, Any], id_: Any) -> Expect:
        st = self.state
        if method == "initialize":
            if st.revision is not None:
                return Expect(id_, -32600)
            asked = params.get("protocolVersion")
            if not isinstance(asked, str) or not isinstance(params.get("capabilities", {}), dict):
                st.era = None
                return Expect(id_, -32602)
            st.revision = asked if asked in HANDSHAKE else HANDSHAKE[0]
            want = st.revision
            return Expect(id_, check=lambda r: None if r.get("protocolVersion") == want
                          else f"initialize answered {r.get('protocolVersion')}")
        if method == "ping":
            return Expect(id_, check=_ok)
        if method == "resources/templates/list":  # none; cacheable fields in 2026-07-28
            return Expect(id_, check=lambda r: None if r.get("resourceTemplates") == []
                          else f"resources/templates/list gave {r}")
        if method == "logging/setLevel":
            return Expect(id_, check=_ok) if params.get("level") in LEVELS else Expect(id_, -32602)
        if method == "server/discover":
            return Expect(id_, check=lambda r: None if MODERN in r.get("supportedVersions", [])
                          else "discover lacks 2026-07-28")
        if method == "prompts/list":
            if "cursor" in params and params["cursor"] is not None:
                return Expect(id_, -32602)  # the driver never holds a real cursor
            names = self.names[:100]
            return Expect(id_, check=lambda r: None if [p["name"] for p in r["prompts"]] == names
                          else f"prompts/list gave {[p['name'] for p in r['prompts']]}")
        if method == "resources/list":
            return Expect(id_, check=lambda r: None if r["resources"] == [] else "resources")
        if method == "resources/read":
            return Expect(id_, -32602 if st.era == "modern" or not isinstance(
                params.get("uri"), str) else -32002)
        if method == "completion/complete":
            return self.complete(params, id_)
        if method == "subscriptions/listen":
            raise ValueError("the driver never opens subscriptions")
        return self.get(params, id_)

    def get(self, params: dict[str, Any], id_: Any) -> Expect:
        name, args = params.get("name"), params.get("arguments")
        if not isinstance(name, str) or (args is not None and not isinstance(args, dict)):
            return Expect(id_, -32602)
        if self.state.era == "modern" and ("requestState" in params or "inputResponses" in params):
            return Expect(id_, anything=True)
        try:
            want = self.renderer.get(name, args)["messages"]
        except RenderError as exc:
            return Expect(id_, error_code(exc))
        return Expect(id_, check=lambda r: None if r.get("messages") == want
                      else "prompts/get result differs from the in-process render")

    def complete(self, params: dict[str, Any], id_: Any) -> Expect:
        ref, arg = params.get("ref"), params.get("argument")
        if not isinstance(ref, dict) or not isinstance(arg, dict):
            return Expect(id_, -32602)
        if ref.get("type") != "ref/prompt":
            return Expect(id_, -32602)
        name, value = arg.get("name"), arg.get("value")
        if not all(isinstance(v, str) for v in (ref.get("name"), name, value)):
            return Expect(id_, -32602)
        prompt = self.renderer.prompts.get(ref["name"])
        spec = next((a for a in (prompt or {}).get("arguments", []) if a["name"] == name), None)
        if spec is None:
            return Expect(id_, -32602)
        pool = [*spec.get("enum", []), *spec.get("examples", [])]
        prefix = str(value).lower()
        want = [v for v in pool if v.lower().startswith(prefix)][:100]
        return Expect(id_, check=lambda r: None if r["completion"]["values"] == want
                      else f"completion gave {r['completion']['values']}, want {want}")


def _ok(result: Any) -> str | None:
    extra = set(result) - {"_meta", "resultType"}
    return None if not extra else f"expected an empty result, got {sorted(extra)}"


def valid_id(id_: Any) -> bool:
    return isinstance(id_, str) or (isinstance(id_, int) and not isinstance(id_, bool))


def judge(expect: Expect, reply: Any) -> str | None:
    """None if ``reply`` is the well-formed answer ``expect`` describes, else why not."""
    if expect.batch is not None:
        if not isinstance(reply, list) or len(reply) != len(expect.batch):
            return f"expected a batch of {len(expect.batch)} replies, got {str(reply)[:200]}"
        for e, r in zip(expect.batch, reply, strict=True):
            why = judge(e, r)
            if why:
                return why
        return None
    if not isinstance(reply, dict) or reply.get("jsonrpc") != "2.0":
        return f"not a JSON-RPC 2.0 reply: {str(reply)[:200]}"
    if ("result" in reply) == ("error" in reply):
        return f"a reply needs exactly one of result/error: {str(reply)[:200]}"
    if expect.id is NO_ID:
        if expect.null_id != ("id" in reply and reply["id"] is None) or (
                not expect.null_id and "id" in reply):
            return f"wrong unknown-id form (null expected: {expect.null_id}): {reply}"
    elif reply.get("id") != expect.id or type(reply.get("id")) is not type(expect.id):
        return f"reply id {reply.get('id')!r} for request id {expect.id!r}"
    if expect.anything:
        return None
    if expect.code is not None:
        err = reply.get("error")
        if not isinstance(err, dict) or err.get("code") != expect.code:
            return f"expected error {expect.code}, got {str(reply)[:300]}"
        if not isinstance(err.get("message"), str) or not err["message"]:
            return f"error without a message: {reply}"
        return None
    if "result" not in reply or not isinstance(reply["result"], dict):
        return f"expected a result, got {str(reply)[:300]}"
    if expect.modern and reply["result"].get("resultType") != "complete":
        return f"2026-07-28 result without resultType complete: {str(reply)[:200]}"
    assert expect.check is not None
    return expect.check(reply["result"])
