"""The MCP methods, each answered from one snapshot for one connection's revision.

Era rules live in :mod:`promptops.serve.protocol`; here a handler only needs the
revision (to shape fields) and, in the stateless era, the request's client capabilities.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from promptops.errors import RenderError
from promptops.serve import elicitation, revisions
from promptops.serve.catalog import CursorError, Snapshot, resource_uri
from promptops.serve.jsonrpc import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    META_SUB,
    RESOURCE_NOT_FOUND,
    SERVER_INFO,
    Json,
    Rpc,
)

if TYPE_CHECKING:
    from promptops.serve.protocol import Server


def call(srv: Server, snap: Snapshot, method: str, params: Json, id_: Any, caps: Json) -> Any:
    rev = srv.revision or revisions.MODERN
    if method == "initialize":
        return initialize(srv, snap, params)
    if method == "ping":
        return {}
    if method == "logging/setLevel":
        return set_level(srv, params)
    if method == "server/discover":
        return {"supportedVersions": list(revisions.SUPPORTED),
                "capabilities": capabilities(snap, rev),
                **_instructions(snap), **_cacheable(srv, snap, rev)}
    if method == "subscriptions/listen":
        return listen(srv, params, id_)
    if method == "prompts/list":
        names, nxt = _page(srv, snap, "prompts", snap.names, params)
        out = {"prompts": [snap.descriptor(n, rev) for n in names]}
        return {**out, **({"nextCursor": nxt} if nxt else {}), **_cacheable(srv, snap, rev)}
    if method == "prompts/get":
        return get_prompt(srv, snap, params, rev, caps)
    if method == "completion/complete":
        return {"completion": complete(snap, params)}
    if method == "resources/list":
        uris, nxt = _page(srv, snap, "resources", snap.uris, params)
        res = [revisions.resource_descriptor(u, *snap.resources[u], rev) for u in uris]
        return {"resources": res, **({"nextCursor": nxt} if nxt else {}),
                **_cacheable(srv, snap, rev)}
    if method == "resources/templates/list":
        return {"resourceTemplates": [], **_cacheable(srv, snap, rev)}
    return {**read_resource(snap, params, rev), **_cacheable(srv, snap, rev)}


def capabilities(snap: Snapshot, rev: str) -> Json:
    caps: Json = {"prompts": {"listChanged": True}}
    if revisions.has_completions_capability(rev):
        caps["completions"] = {}
    if rev != revisions.MODERN:  # 2026-07-28 logs per request (_meta logLevel), not by setLevel
        caps["logging"] = {}
    if snap.resources:
        caps["resources"] = {}
    return caps


def _instructions(snap: Snapshot) -> Json:
    text = snap.instructions
    return {"instructions": text} if text else {}


def _cacheable(srv: Server, snap: Snapshot, rev: str) -> Json:
    """`ttlMs` and `cacheScope`: 2026-07-28 requires both on every CacheableResult."""
    return {"ttlMs": srv.ttl_ms, "cacheScope": snap.cache_scope} if rev == revisions.MODERN else {}


def _page(srv: Server, snap: Snapshot, kind: str, items: tuple[str, ...], params: Json) -> Any:
    try:
        return snap.page(kind, items, params.get("cursor"), srv.page_size, srv.signer)
    except CursorError as exc:
        raise Rpc(INVALID_PARAMS, str(exc)) from exc


def initialize(srv: Server, snap: Snapshot, params: Json) -> Json:
    if srv.revision is not None:
        raise Rpc(INVALID_REQUEST, "already initialized")
    asked = params.get("protocolVersion")
    if not isinstance(asked, str) or not isinstance(params.get("capabilities", {}), dict):
        srv.era = None  # nothing was negotiated: the connection is still undecided
        raise Rpc(INVALID_PARAMS, "initialize needs protocolVersion (a string) and capabilities")
    rev = asked if asked in revisions.HANDSHAKE else revisions.LATEST_HANDSHAKE
    srv.revision = rev
    return {"protocolVersion": rev, "capabilities": capabilities(snap, rev),
            "serverInfo": SERVER_INFO, **_instructions(snap)}


def set_level(srv: Server, params: Json) -> Json:
    level = params.get("level")
    if level not in ("debug", "info", "notice", "warning", "error", "critical", "alert",
                     "emergency"):
        raise Rpc(INVALID_PARAMS, f"unknown log level {level!r}")
    srv.log_level = level
    return {}


def listen(srv: Server, params: Json, id_: Any) -> list[Json]:
    wanted = params.get("notifications")
    if not isinstance(wanted, dict):
        raise Rpc(INVALID_PARAMS, "subscriptions/listen needs a `notifications` object")
    prompts = wanted.get("promptsListChanged") is True
    srv.subscribe(id_, prompts)
    agreed = {"promptsListChanged": True} if prompts else {}
    return [{"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
             "params": {"_meta": {META_SUB: id_}, "notifications": agreed}}]


def get_prompt(srv: Server, snap: Snapshot, params: Json, rev: str, caps: Json) -> Json:
    name, args = params.get("name"), params.get("arguments")
    if not isinstance(name, str):
        raise Rpc(INVALID_PARAMS, "prompts/get needs a prompt `name` (a string)")
    if args is not None and not isinstance(args, dict):
        raise Rpc(INVALID_PARAMS, "arguments must be an object of strings")
    entry = snap.index.get(name)
    if entry is None:
        raise Rpc(INVALID_PARAMS, f"unknown prompt {name!r}")
    budget = entry.renderer.budget()  # the request's clock starts before MRTR's work too
    if rev == revisions.MODERN:
        try:
            merged = dict(args or {})
            if "requestState" in params:
                merged = {**elicitation.decode_state(srv.signer, params["requestState"], name),
                          **merged}
            if "inputResponses" in params:
                merged.update(elicitation.answers(params["inputResponses"]))
        except elicitation.StateError as exc:
            raise Rpc(INVALID_PARAMS, str(exc)) from exc
        args = merged
        missing = [a["name"] for a in entry.prompt["arguments"]
                   if a.get("required") and a["name"] not in merged]
        if missing and elicitation.can_elicit(caps):
            wrong = next((k for k, v in merged.items() if not isinstance(v, str)), None)
            if wrong is not None:  # refused now, not carried through a requestState
                raise Rpc(INVALID_PARAMS, f"argument {wrong!r} must be a string",
                          {"argument": wrong})
            return elicitation.input_required(srv.signer, entry.prompt, missing, merged)
    try:
        result = entry.renderer.get(name, args, budget)
    except RenderError as exc:
        raise Rpc(exc.code, str(exc), {"argument": exc.argument} if exc.argument else None) from exc
    pkg = entry.bundle["package"]["name"]
    for msg, src in zip(result["messages"], entry.prompt["messages"], strict=True):
        msg["content"] = revisions.content(msg["content"], src, lambda p: resource_uri(pkg, p), rev)
    result["_meta"] = snap.traceability(entry.bundle)
    return result


def complete(snap: Snapshot, params: Json) -> Json:
    ref, arg = params.get("ref"), params.get("argument")
    if not isinstance(ref, dict) or not isinstance(arg, dict):
        raise Rpc(INVALID_PARAMS, "completion/complete needs `ref` and `argument` objects")
    if ref.get("type") != "ref/prompt":
        raise Rpc(INVALID_PARAMS, f"no completions for {ref.get('type')!r}: this server has "
                  "no resource templates")
    name, value = arg.get("name"), arg.get("value")
    if not isinstance(ref.get("name"), str) or not isinstance(name, str) or not isinstance(
            value, str):
        raise Rpc(INVALID_PARAMS, "ref.name, argument.name and argument.value must be strings")
    try:
        return snap.complete(ref["name"], name, value)
    except KeyError as exc:
        raise Rpc(INVALID_PARAMS, str(exc.args[0])) from exc


def read_resource(snap: Snapshot, params: Json, rev: str) -> Json:
    uri = params.get("uri")
    if not isinstance(uri, str):
        raise Rpc(INVALID_PARAMS, "resources/read needs a `uri` (a string)")
    found = snap.resources.get(uri)
    if found is None:  # 2026-07-28 moved "resource not found" to -32602
        code = INVALID_PARAMS if rev == revisions.MODERN else RESOURCE_NOT_FOUND
        raise Rpc(code, f"resource not found: {uri}", {"uri": uri})
    _, res = found
    body = {"text": res["text"]} if "text" in res else {"blob": res["blob"]}
    return {"contents": [{"uri": uri, "mimeType": res["mimeType"], **body}]}
