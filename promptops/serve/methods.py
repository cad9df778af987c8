"""The MCP methods this server answers, as one table: name -> handler, eras, capability.

A handler takes the session, the one snapshot the request is answered from, the params
and a :class:`Call` (the request's id and revision, the client capabilities of a
stateless request, the server's settings), and returns the result; it never writes a
session's state except through the session's own methods. Everything else is derived
from :data:`METHODS` so that a new method is one row and one function: which methods an
era answers, the capabilities announced (in table order), and what "method not found"
says about a method that is not answered (see :func:`not_found`).

Failures below the protocol (a render error, a cursor or requestState that cannot be
used) become JSON-RPC errors in one place, :func:`rpc_error`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from promptops import __version__
from promptops.errors import ArgumentError, TemplateError
from promptops.sandbox.limits import Budget
from promptops.serve.catalog import (
    LEVELS,
    LIST_CHANGED,
    TOOLS_LIST_CHANGED,
    CatalogError,
    Snapshot,
    Subscription,
    resource_uri,
)
from promptops.serve.elicitation import (
    StateError,
    answers,
    can_elicit,
    decode_state,
    input_required,
)
from promptops.serve.jsonrpc import (
    BATCH_SECONDS,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    RESOURCE_NOT_FOUND,
    Json,
    RequestId,
    RpcError,
)
from promptops.serve.revisions import (
    INPUT_REQUESTS,
    META_LOG_LEVEL,
    META_SUB,
    SERVER_SENT,
    SESSION,
    SESSION_NEEDS,
    STATELESS,
    STATELESS_LACKS,
    SUPPORTED,
    UNOFFERED,
    Era,
    content,
    era_of,
    has_cache_hints,
    has_completions_capability,
    resource_descriptor,
    resource_not_found_is_invalid_params,
)
from promptops.serve.session import Session
from promptops.serve.signing import Signer

if TYPE_CHECKING:
    from promptops.pipeline.bundle_types import Bundle

SERVER_INFO = {"name": "promptops", "version": __version__}

# The tool views (promptops.serve.tools): a package's `serve.tools`, else `serve --tools`.
OFF, CATALOG, PER_PROMPT = "off", "catalog", "per-prompt"
TOOL_MODES = (CATALOG, PER_PROMPT)


# Plain classes rather than dataclasses: see promptops.serve.jsonrpc (cold path).


class Settings:
    """The server's own choices, the same for every session (read only)."""

    __slots__ = ("batch_seconds", "page_size", "signer", "tools", "ttl_ms")

    def __init__(self, *, page_size: int = 100, ttl_ms: int = 60_000,
                 signer: Signer | None = None, batch_seconds: float = BATCH_SECONDS,
                 tools: str | None = None) -> None:
        self.page_size = page_size  # entries per list page
        self.ttl_ms = ttl_ms  # ttlMs on cacheable results (2026-07-28)
        self.signer = signer or Signer.random()  # seals cursors and requestState
        self.batch_seconds = batch_seconds  # run time of one JSON-RPC batch
        # `serve --tools`: the tool view of packages that do not choose their own (tools.py)
        if tools is not None and tools not in TOOL_MODES:
            raise ValueError(f"unknown tool view {tools!r}")
        self.tools = tools


class Call:
    """What a handler knows of its request beyond the params."""

    __slots__ = ("capabilities", "id", "revision", "settings")

    def __init__(self, id_: RequestId, revision: str, capabilities: Json,
                 settings: Settings) -> None:
        self.id = id_
        self.revision = revision  # the session's, or the stateless request's envelope's
        self.capabilities = capabilities  # a stateless request's client capabilities, else {}
        self.settings = settings


class Subscribe:
    """subscriptions/listen's outcome: a stream to open, acknowledged instead of a result."""

    __slots__ = ("acknowledgement", "subscription")

    def __init__(self, subscription: Subscription, acknowledgement: Json) -> None:
        self.subscription, self.acknowledgement = subscription, acknowledgement


Result = Json | Subscribe
Handler = Callable[[Session, Snapshot, Json, Call], Result]


class Method:
    """One row of :data:`METHODS`."""

    __slots__ = ("capability", "eras", "handler")

    def __init__(self, handler: Handler, eras: frozenset[Era],
                 capability: str | None = None) -> None:
        self.handler = handler
        self.eras = eras  # the eras that answer it
        self.capability = capability  # the server capability it belongs to


# ---- handlers ---------------------------------------------------------------------------
def initialize(session: Session, snap: Snapshot, params: Json, call: Call) -> Json:
    tools = tools_on(snap, call.settings)
    rev = session.initialize(params, frozenset({TOOLS_LIST_CHANGED}) if tools else frozenset())
    return {"protocolVersion": rev, "capabilities": capabilities(snap, rev, call.settings),
            "serverInfo": SERVER_INFO, **_instructions(snap)}


def ping(session: Session, snap: Snapshot, params: Json, call: Call) -> Json:
    return {}


def set_level(session: Session, snap: Snapshot, params: Json, call: Call) -> Json:
    session.set_log_level(params.get("level"))
    return {}


def discover(session: Session, snap: Snapshot, params: Json, call: Call) -> Json:
    return {"supportedVersions": list(SUPPORTED),
            "capabilities": capabilities(snap, call.revision, call.settings),
            **_instructions(snap),
            **_cacheable(snap, call)}


def listen(session: Session, snap: Snapshot, params: Json, call: Call) -> Subscribe:
    wanted = params.get("notifications")
    if not isinstance(wanted, dict):
        raise RpcError(INVALID_PARAMS, "subscriptions/listen needs a `notifications` object")
    prompts = wanted.get("promptsListChanged") is True
    tools = wanted.get("toolsListChanged") is True and tools_on(snap, call.settings)
    hears = ({LIST_CHANGED} if prompts else set()) | ({TOOLS_LIST_CHANGED} if tools else set())
    level = params["_meta"].get(META_LOG_LEVEL)  # the envelope was checked: _meta is a dict
    if level is not None and level not in LEVELS:
        raise RpcError(INVALID_PARAMS, f"unknown log level {level!r} in _meta {META_LOG_LEVEL}")
    # A logLevel in the listen request's _meta opts this stream in to notifications/message
    # (the 2026-07-28 schema: without it the server "MUST NOT send any" for the request).
    sub = Subscription(call.id, frozenset(hears), session.send, log_level=level)
    agreed: Json = {"promptsListChanged": True} if prompts else {}
    if tools:
        agreed["toolsListChanged"] = True
    return Subscribe(sub, {"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                           "params": {"_meta": {META_SUB: call.id}, "notifications": agreed}})


def list_prompts(session: Session, snap: Snapshot, params: Json, call: Call) -> Json:
    names, nxt = _page(snap, "prompts", snap.names, params, call)
    out = {"prompts": [snap.descriptor(n, call.revision) for n in names]}
    return {**out, **({"nextCursor": nxt} if nxt else {}), **_cacheable(snap, call)}


def get_prompt(session: Session, snap: Snapshot, params: Json, call: Call) -> Json:
    name, args = params.get("name"), params.get("arguments")
    if not isinstance(name, str):
        raise RpcError(INVALID_PARAMS, "prompts/get needs a prompt `name` (a string)")
    if args is not None and not isinstance(args, dict):
        raise RpcError(INVALID_PARAMS, "arguments must be an object of strings")
    entry = snap.index.get(name)
    if entry is None:
        raise RpcError(INVALID_PARAMS, f"unknown prompt {name!r}")
    renderer = snap.renderers[entry.slot]
    # Renderer.budget() without its call: the request's clock starts before MRTR's work too
    budget = Budget(renderer.limits.served)  # with the wall backstop (sandbox.limits)
    rev, signer = call.revision, call.settings.signer
    if rev >= INPUT_REQUESTS:  # has_input_requests(rev), without the call
        merged = args or {}  # copied only to be changed: read-only below
        if "requestState" in params:
            merged = {**decode_state(signer, params["requestState"], name), **merged}
        if "inputResponses" in params:
            merged = {**merged, **answers(params["inputResponses"])}
        args = merged
        # the missing arguments matter only to a client that can be asked for them (asked
        # first: the look-up is two calls on every 2026-07-28 get)
        # (and can_elicit only for a client that names elicitation at all: a call fewer)
        missing = renderer.rules(name).missing(merged) if call.capabilities.get(
            "elicitation") is not None and can_elicit(call.capabilities) else None
        if missing:
            wrong = next((k for k, v in merged.items() if not isinstance(v, str)), None)
            if wrong is not None:  # refused now, not carried through a requestState
                raise RpcError(INVALID_PARAMS, f"argument {wrong!r} must be a string",
                               {"argument": wrong})
            return input_required(signer, entry.prompt, missing, merged)
    shaped = entry.known  # Entry.shaped once known, without its property's call
    if shaped is None:
        shaped = entry.shaped
    if shaped:  # audio, links, annotations and content _meta differ between revisions
        rendered, sources = renderer.render(name, args, budget)
        result = cast(Json, rendered)  # the wire form from here
        pkg = snap.bundles[entry.slot]["package"]["name"]
        for msg, src in zip(result["messages"], sources, strict=True):
            msg["content"] = content(msg["content"], src, lambda p: resource_uri(pkg, p), rev)
    else:
        result = cast(Json, renderer.run(name, args, budget, None))  # get(), a frame fewer
    result["_meta"] = snap.metas[entry.slot]
    return result


def complete(session: Session, snap: Snapshot, params: Json, call: Call) -> Json:
    ref, arg = params.get("ref"), params.get("argument")
    if not isinstance(ref, dict) or not isinstance(arg, dict):
        raise RpcError(INVALID_PARAMS, "completion/complete needs `ref` and `argument` objects")
    if ref.get("type") != "ref/prompt":
        raise RpcError(INVALID_PARAMS, f"no completions for {ref.get('type')!r}: this server "
                       "has no resource templates")
    name, value = arg.get("name"), arg.get("value")
    if not isinstance(ref.get("name"), str) or not isinstance(name, str) or not isinstance(
            value, str):
        raise RpcError(INVALID_PARAMS,
                       "ref.name, argument.name and argument.value must be strings")
    return {"completion": snap.complete(ref["name"], name, value)}


def list_resources(session: Session, snap: Snapshot, params: Json, call: Call) -> Json:
    uris, nxt = _page(snap, "resources", snap.uris, params, call)
    res = [resource_descriptor(u, *snap.resources[u], call.revision) for u in uris]
    return {"resources": res, **({"nextCursor": nxt} if nxt else {}), **_cacheable(snap, call)}


def list_resource_templates(session: Session, snap: Snapshot, params: Json, call: Call) -> Json:
    return {"resourceTemplates": [], **_cacheable(snap, call)}


def read_resource(session: Session, snap: Snapshot, params: Json, call: Call) -> Json:
    uri = params.get("uri")
    if not isinstance(uri, str):
        raise RpcError(INVALID_PARAMS, "resources/read needs a `uri` (a string)")
    found = snap.resources.get(uri)
    if found is None:
        code = (INVALID_PARAMS if resource_not_found_is_invalid_params(call.revision)
                else RESOURCE_NOT_FOUND)
        raise RpcError(code, f"resource not found: {uri}", {"uri": uri})
    _, res = found
    body = {"text": res["text"]} if "text" in res else {"blob": res["blob"]}
    return {"contents": [{"uri": uri, "mimeType": res["mimeType"], **body}],
            **_cacheable(snap, call)}


def _instructions(snap: Snapshot) -> Json:
    text = snap.instructions
    return {"instructions": text} if text else {}


def _cacheable(snap: Snapshot, call: Call) -> Json:
    """`ttlMs` and `cacheScope`: 2026-07-28 requires both on every CacheableResult."""
    if not has_cache_hints(call.revision):
        return {}
    return {"ttlMs": call.settings.ttl_ms, "cacheScope": snap.cache_scope}


def _page(snap: Snapshot, kind: str, items: tuple[str, ...], params: Json,
          call: Call) -> tuple[list[str], str | None]:
    return snap.page(kind, items, params.get("cursor"), call.settings.page_size,
                     call.settings.signer)


# ---- the table --------------------------------------------------------------------------
EVERY_ERA = frozenset(Era)
SESSION_ERA = frozenset({SESSION})
STATELESS_ERA = frozenset({STATELESS})

# Capabilities are announced in table order (prompts, completions, logging, resources).
METHODS: dict[str, Method] = {
    "prompts/list": Method(list_prompts, EVERY_ERA, "prompts"),
    "prompts/get": Method(get_prompt, EVERY_ERA, "prompts"),
    "completion/complete": Method(complete, EVERY_ERA, "completions"),
    "logging/setLevel": Method(set_level, SESSION_ERA, "logging"),
    "resources/list": Method(list_resources, EVERY_ERA, "resources"),
    "resources/read": Method(read_resource, EVERY_ERA, "resources"),
    "resources/templates/list": Method(list_resource_templates, EVERY_ERA, "resources"),
    "initialize": Method(initialize, SESSION_ERA),
    "ping": Method(ping, SESSION_ERA),
    "server/discover": Method(discover, STATELESS_ERA),
    "subscriptions/listen": Method(listen, STATELESS_ERA),
}

# What each capability says, for a snapshot and revision; None: not announced.
_CAPABILITIES: dict[str, Callable[[Snapshot, str], Json | None]] = {
    "prompts": lambda snap, rev: {"listChanged": True},
    "completions": lambda snap, rev: {} if has_completions_capability(rev) else None,
    "logging": lambda snap, rev: {},
    "resources": lambda snap, rev: {} if snap.resources else None,
}


def capabilities(snap: Snapshot, rev: str, settings: Settings | None = None) -> Json:
    """The capabilities of the methods answered in ``rev``'s era (and ``tools`` when the
    snapshot offers a tool view: see :func:`tools_on`)."""
    era = era_of(rev)
    caps: Json = {}
    seen: set[str] = set()
    for method in METHODS.values():
        name = method.capability
        if name is None or name in seen or era not in method.eras:
            continue
        seen.add(name)
        value = _CAPABILITIES[name](snap, rev)
        if value is not None:
            caps[name] = value
    if settings is not None and tools_on(snap, settings):
        caps["tools"] = {"listChanged": True}
    return caps


def tool_mode(bundle: Bundle, default: str | None) -> str | None:
    """The tool view a package is offered in: its own `serve.tools`, else ``default``."""
    mode = bundle["package"].get("tools", default)
    return None if mode == OFF else mode


def tools_on(snap: Snapshot, settings: Settings) -> bool:
    """Whether any served package is offered as tools (then tools/* are answered)."""
    default = settings.tools
    return any(tool_mode(b, default) is not None for b in snap.bundles)


# Each era's part of the table, looked up per request without hashing the enum
# (Server.answer reads them itself: find() without its call).
SESSION_METHODS = {name: m for name, m in METHODS.items() if SESSION in m.eras}
STATELESS_METHODS = {name: m for name, m in METHODS.items() if STATELESS in m.eras}


def find(method: str, era: Era) -> Method | None:
    """The method as answered in ``era``, or None (then :func:`not_found` says why)."""
    return (STATELESS_METHODS if era is STATELESS else SESSION_METHODS).get(method)


def not_found(method: str, rev: str) -> str:
    """The -32601 message for a method this server does not answer on revision ``rev``."""
    shown = method if len(method) <= 100 else method[:100] + "..."
    lacking = UNOFFERED.get(method)
    if lacking is not None and lacking.defined(rev):
        return f"this server offers no {lacking.feature} (it serves prompts): {shown!r}"
    if method in SERVER_SENT:
        return f"{shown!r} is a request a server sends to its client, not one it answers"
    if method in METHODS or lacking is not None:  # answered in the other era, or not at all
        why = STATELESS_LACKS if era_of(rev) is STATELESS else SESSION_NEEDS
        return f"method {shown!r} is not part of revision {rev} ({why})"
    return f"unknown method {shown!r}"


# ---- failures as JSON-RPC errors: the one place they get a code ------------------------
# By class, looked up along the exception's MRO (a subclass may be listed apart from its
# base). The renderer says whose fault a failure is, never a protocol code: the codes
# agree with promptops.render.mcp.error_code (test files and reviews read those).
ERROR_CODES: dict[type[Exception], int] = {
    CatalogError: INVALID_PARAMS,  # a cursor not issued or stale; no such completion ref
    StateError: INVALID_PARAMS,  # a requestState or inputResponses this server cannot use
    ArgumentError: INVALID_PARAMS,  # the request's arguments: missing, refused by a rule
    TemplateError: INTERNAL_ERROR,  # the template failed or ran over its bounds
}
FAILURES: tuple[type[Exception], ...] = tuple(ERROR_CODES)


def rpc_error(exc: Exception) -> RpcError:
    """The error reply for a failure a handler let through (one of :data:`FAILURES`).

    The dispatcher calls every handler as ``except FAILURES as exc: raise rpc_error(exc)``.
    """
    code = next((ERROR_CODES[c] for c in type(exc).__mro__ if c in ERROR_CODES),
                INTERNAL_ERROR)
    argument = getattr(exc, "argument", None)
    return RpcError(code, str(exc), {"argument": argument} if argument else None)
