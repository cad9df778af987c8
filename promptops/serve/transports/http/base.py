"""What every room of the HTTP transport shares: its config, its refusal, the ASGI types.

The lowest module of the package (nothing here imports another of its modules): the
bind and bounds (:class:`HttpConfig`), the refusal a request gets before dispatch
(:class:`HttpError`, always answered as a JSON-RPC error body by :func:`refuse`), and the
three ASGI helpers every route uses (headers by name, a bounded body read, a response).
A route handler here is ASGI's callable that also returns the status it sent, which the
app's access log and metrics read without wrapping ``send``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import TYPE_CHECKING, Any

from promptops.serve import jsonrpc

if TYPE_CHECKING:
    from promptops.serve.auth import Principal

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]  # one ASGI message (received or sent)
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
SendAsgi = Callable[[MutableMapping[str, Any]], Awaitable[None]]
Encode = Callable[[object], bytes]  # a codec's encode (promptops.serve.codec)


# What one request leaves for its access-log line and metrics: ``[rpc, principal]``, read
# and written as ``note[RPC]`` and ``note[WHO]`` (a two-item list, not a dict: one is made
# for every request, and a dict of two keys costs ~800 instructions more, issue 26)
Note = list["str | None"]
RPC, WHO = 0, 1


JSON_CT = (b"content-type", b"application/json")
NO_STORE = (b"cache-control", b"no-store")
NO_STORE_JSON = [JSON_CT, NO_STORE]
SSE_HEADERS = [(b"content-type", b"text/event-stream"),
               (b"cache-control", b"no-cache, no-transform"), (b"x-accel-buffering", b"no")]
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]", "::1")
PRM_PATH = "/.well-known/oauth-protected-resource"


class HttpConfig:
    """How the HTTP transport is bound and bounded (see ``promptops serve --help``)."""

    def __init__(self, *, host: str = "127.0.0.1", port: int = 8080, path: str = "/mcp",
                 allow_origins: Iterable[str] = (), allow_hosts: Iterable[str] = (),
                 max_body: int = 4 * 1024 * 1024, session_idle_s: float = 1800.0,
                 max_sessions: int = 10_000, max_sessions_per_client: int | None = None,
                 max_streams: int = 256, replay: int = 256,
                 replica_id: str | None = None, keepalive_s: float = 15.0,
                 access_log: bool = True, resource: str | None = None,
                 required_scopes: Iterable[str] = (), issuer: str | None = None,
                 webhook: Callable[[dict[str, str], bytes], int] | None = None) -> None:
        self.host, self.port, self.path = host, port, path.rstrip("/") or "/"
        self.allow_origins = frozenset(o.rstrip("/") for o in allow_origins)
        self.allow_hosts = frozenset(h.lower() for h in allow_hosts)
        self.max_body, self.session_idle_s = max_body, session_idle_s
        self.max_sessions, self.max_streams, self.replay = max_sessions, max_streams, replay
        # one client may hold a tenth of the sessions unless told otherwise (docs/http.md)
        self.max_sessions_per_client = max(1, min(
            max_sessions, max_sessions_per_client or max(1, max_sessions // 10)))
        self.replica_id, self.keepalive_s, self.access_log = replica_id, keepalive_s, access_log
        self.resource = resource or f"http://{_authority(host, port)}{self.path}"
        self.required_scopes = tuple(required_scopes)
        self.issuer = issuer
        self.webhook = webhook  # (headers, body) -> HTTP status; None: no /hooks/git

    @property
    def loopback(self) -> bool:
        return self.host in LOOPBACK_HOSTS

    @property
    def prm_url(self) -> str:
        """Where the protected-resource metadata of the endpoint is (WWW-Authenticate)."""
        base = self.resource.split("://", 1)[-1].split("/", 1)[0]
        return f"{self.resource.split('://', 1)[0]}://{base}{PRM_PATH}{self.path}"


def _authority(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host and not host.startswith("[") else f"{host}:{port}"


class HttpError(Exception):
    """A request refused before dispatch: status, JSON-RPC error body, extra headers."""

    def __init__(self, status: int, code: int, message: str, id_: object = None,
                 data: object = None, headers: Iterable[tuple[bytes, bytes]] = ()) -> None:
        super().__init__(message)
        self.status, self.headers = status, list(headers)
        self.body = jsonrpc.error(id_ if jsonrpc.valid_id(id_) else None, code, message, data)


def headers(scope: Scope) -> dict[str, str]:
    """The request's headers by lower-case name (a repeated name: the last one)."""
    return {k.decode("latin-1").lower(): v.decode("latin-1").strip()
            for k, v in scope.get("headers", ())}


class HeaderReader:
    """:func:`headers` for a route that reads every request's headers (the MCP endpoint).

    The same dict, built from remembered decodings: a server sees few distinct header
    names and mostly the same values (its host, the client's content type, accept,
    user agent, protocol version), and decoding and normalising each one per request
    was a tenth of the endpoint's own cost. Names and short values are remembered per
    reader, at most ``bound`` of each; a reader that fills up forgets everything and
    learns again (request-unique values such as trace ids then cost one decoding each,
    as before). tests/serve/transports/http/test_http_hot_path.py holds it to
    :func:`headers`.
    """

    __slots__ = ("_bound", "_names", "_pairs", "_values", "known")
    LONGEST = 128  # longer values are decoded every time: the memo stays small

    def __init__(self, bound: int = 1024) -> None:
        self._bound = bound
        self._names: dict[bytes, str] = {}
        self._values: dict[bytes, str] = {}
        # (raw name, raw value) as the ASGI server hands them -> (name, value): a request
        # whose every header was seen before is built by dict() alone, without a Python
        # loop over its headers (issue 26: ~500 instructions a header)
        self._pairs: dict[tuple[bytes, bytes], tuple[str, str]] = {}
        # a remembered (name, value) by its raw pair, KeyError if not remembered: a hot
        # caller builds the usual dict as ``dict(map(reader.known, raw))`` and calls the
        # reader on any error (the call was ~1,000 instructions a request, issue 26); the
        # memo is only ever cleared in place, so this stays its look-up
        self.known = self._pairs.__getitem__

    def __call__(self, scope: Scope) -> dict[str, str]:
        raw = scope.get("headers", ())
        try:
            return dict(map(self.known, raw))
        except KeyError:  # a header not seen yet (or not remembered): decoded below
            pass
        except TypeError:  # not bytes (a bytearray from some server): decoded as ever
            return headers(scope)
        try:
            return self._learn(raw)
        except TypeError:
            return headers(scope)

    def _learn(self, raw: Iterable[tuple[bytes, bytes]]) -> dict[str, str]:
        names, values, pairs = self._names, self._values, self._pairs
        out: dict[str, str] = {}
        for k, v in raw:
            name = names.get(k)
            if name is None:
                name = k.decode("latin-1").lower()
                if len(names) >= self._bound:
                    names.clear()
                names[k] = name
            value = values.get(v)
            if value is None:
                value = v.decode("latin-1").strip()
                if len(v) <= self.LONGEST:
                    if len(values) >= self._bound:
                        values.clear()
                    values[v] = value
            if len(v) <= self.LONGEST:
                if len(pairs) >= self._bound:
                    pairs.clear()
                pairs[(k, v)] = (name, value)
            out[name] = value
        return out


def hostname(authority: str) -> str:
    """The host of a ``Host`` value or of an origin without its scheme, lower case."""
    authority = authority.lower()
    if authority.startswith("["):
        return authority.split("]", 1)[0] + "]"
    return authority.rsplit(":", 1)[0] if authority.count(":") == 1 else authority


def client_key(principal: Principal, scope: Scope, *, authenticated: bool) -> str:
    """Whose quota a request counts against: its principal, or without auth its address."""
    if authenticated:
        return principal.name
    peer = scope.get("client")
    return str(peer[0]) if isinstance(peer, (list, tuple)) else "?"


async def read_body(receive: Receive, limit: int,
                    first: Message | None = None) -> bytes | None:
    """The request body, or None once it passes ``limit`` bytes (the rest is drained);
    ``first``: the first ASGI message, when the caller already received it."""
    chunks: list[bytes] = []
    size = 0
    while True:
        if first is not None:
            msg, first = first, None
        else:
            msg = await receive()
        if msg["type"] == "http.disconnect":
            return b""
        chunk = msg.get("body") or b""  # an explicit None from a non-conforming server: empty
        size += len(chunk)
        if size <= limit:
            chunks.append(chunk)
        if not msg.get("more_body"):
            break
    if size > limit:
        return None
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


async def respond(send: SendAsgi, status: int, body: bytes,
                  headers: Iterable[tuple[bytes, bytes]] | None = None) -> int:
    hdrs = [*headers, (b"content-length", b"%d" % len(body))] if headers is not None else \
        [JSON_CT, (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": status, "headers": hdrs})
    await send({"type": "http.response.body", "body": body})
    return status


async def refuse(send: SendAsgi, exc: HttpError, encode: Encode) -> int:
    """The refusal as sent: its status, its JSON-RPC error body, never stored."""
    return await respond(send, exc.status, encode(exc.body), [JSON_CT, NO_STORE, *exc.headers])
