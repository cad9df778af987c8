"""The Streamable HTTP transport: one ASGI endpoint serving both eras of MCP.

A *dual-era* server, as the 2026-07-28 versioning text describes: the era comes from
each request. A request whose body carries the ``_meta`` envelope, whose
``MCP-Protocol-Version`` header is a stateless revision, or that is ``server/discover``
is answered statelessly (a throwaway :class:`~promptops.serve.session.Session` per
request, opened and closed around :meth:`Dispatcher.handle`); ``initialize`` and any
request with an ``Mcp-Session-Id`` belong to a session (2025-03-26 .. 2025-11-25
Streamable HTTP), which lives in :class:`Sessions` until DELETE or idle expiry. The
header is checked against the body before anything is dispatched (-32020
HeaderMismatch with HTTP 400), so a legacy-header, modern-body request never reaches
the session path.

Everything about the protocol is the serve core's: this module frames bytes. Replies
are ``application/json``; ``subscriptions/listen`` and the session GET stream are SSE.
Requests are answered inline on the event loop (a render is bounded by its deadline, and
a thread hop per request would cost more CPU than most renders); notifications from the
git follower's thread reach streams through ``call_soon_threadsafe``.

Bounds: bodies over ``max_body`` are 413 (read in chunks, never kept whole beyond the
limit), then parsed by :mod:`~promptops.serve.wire` with its depth and value limits;
sessions are capped and expire after ``session_idle_s``; each client (its principal,
or its address without auth) may hold ``max_streams`` open streams; a stream whose
reader falls ``MAX_QUEUE`` events behind is ended. ``Origin`` outside the allow-list is
403 (DNS rebinding), and when bound to loopback so is a ``Host`` that is not loopback.

Shutdown (:meth:`HttpApp.drain`): new streams are refused with 503, every listen
stream gets its final ``SubscriptionsListenResult`` and ends, GET streams end, and
the ASGI server then finishes in-flight requests within its graceful timeout.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import json
import secrets
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from types import FrameType
from typing import TYPE_CHECKING, Any, TypedDict

import orjson

from promptops.serve import jsonrpc, wire
from promptops.serve.auth import (
    ANONYMOUS,
    EVERYTHING,
    AuthError,
    Principal,
    StaticTokens,
    www_authenticate,
)
from promptops.serve.auth import resource_metadata as prm_document
from promptops.serve.log import log, log_bug
from promptops.serve.methods import METHODS
from promptops.serve.revisions import (
    LATEST_STATELESS,
    META_VERSION,
    SESSION_REVISIONS,
    STATELESS_REVISIONS,
    SUPPORTED,
)
from promptops.serve.session import envelope
from promptops.serve.usage import PRINCIPAL, TRACE_HEADER, TRACE_ID

if TYPE_CHECKING:
    from promptops.serve.auth import JwtTokens
    from promptops.serve.jsonrpc import Json, Outbound
    from promptops.serve.metrics import Metrics
    from promptops.serve.server import Server
    from promptops.serve.session import Session
    from promptops.serve.transports.http_sse import OldSession
    from promptops.serve.ui_login import Sessions as UiSessions
    from promptops.serve.usage import Usage
    from promptops.serve.views import Views

Scope = MutableMapping[str, Any]


class Note(TypedDict):
    """What one request leaves for its access-log line and metrics."""

    rpc: str | None
    principal: str | None


Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
SendAsgi = Callable[[MutableMapping[str, Any]], Awaitable[None]]

HEADER_MISMATCH = -32020
MAX_QUEUE = 1000  # events a stream's reader may fall behind before the stream is ended
JSON_CT = (b"content-type", b"application/json")
NO_STORE = (b"cache-control", b"no-store")
SSE_HEADERS = [(b"content-type", b"text/event-stream"),
               (b"cache-control", b"no-cache, no-transform"), (b"x-accel-buffering", b"no")]
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]", "::1")
# The JSON-RPC methods a request may name in metrics and the access log; any other is
# "other" (a caller-chosen string must never become a label value: defect 8, issue 23).
KNOWN_METHODS = frozenset((*METHODS, "notifications/initialized", "notifications/cancelled",
                           "notifications/roots/list_changed", "http+sse"))
NAMED_PARAM = {"prompts/get": "name", "resources/read": "uri", "tools/call": "name"}
_END = object()  # queue sentinel: end the stream


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


def _authority(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host and not host.startswith("[") else f"{host}:{port}"


class HttpError(Exception):
    """A request refused before dispatch: status, JSON-RPC error body, extra headers."""

    def __init__(self, status: int, code: int, message: str, id_: object = None,
                 data: object = None, headers: Iterable[tuple[bytes, bytes]] = ()) -> None:
        super().__init__(message)
        self.status, self.headers = status, list(headers)
        self.body = jsonrpc.error(id_ if jsonrpc.valid_id(id_) else None, code, message, data)


def encode(message: object) -> bytes:
    """:func:`promptops.serve.wire.encode`, through orjson when it can write the message.

    A ``prompts/get`` reply costs ~5 µs in ``json``'s C encoder and ~0.4 µs in orjson
    (the stateless request's largest cost after the render). orjson writes the same
    compact UTF-8 JSON for the same data; what it cannot write the way ``wire`` does
    it refuses with a TypeError - a LongInt, an integer past 64 bits, a lone surrogate,
    a non-string key, nesting past 254 - and then ``wire.encode`` writes it. The one
    difference is the spelling of some floats (``1e-7`` for ``1e-07``: the same number,
    shortest round trip both; tests/serve_http/test_http_hot_path.py).
    """
    try:
        return orjson.dumps(message)
    except TypeError:
        return wire.encode(message)


_DIGIT_RUNS = bytes(0x39 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))  # digit -> 9
_LONG_RUN = b"9" * 19  # a number orjson would not read as wire does (past 64 bits)


def parse(body: bytes) -> object:
    """:func:`promptops.serve.jsonrpc.parse`, through orjson when its reading is the same.

    ``wire.parse`` bounds depth and value count first, then reads with ``json``
    (2.6 µs for a ``prompts/get`` body; orjson 0.6 µs). The bounds check runs here
    too, unchanged. orjson reads every JSON text as ``json`` does but two: it reads an
    integer past 64 bits as a float (``wire`` keeps it exact), and it refuses some texts
    ``wire`` accepts (a lone surrogate escape, 1e400). So a body with any run of 19 or
    more digits, one over the bounds, and one orjson refuses are read by
    ``jsonrpc.parse`` itself, which gives the same value or the same -32700 as before
    (tests/serve_http/test_http_hot_path.py).
    """
    if wire.structure_problem(body) is None and _LONG_RUN not in body.translate(_DIGIT_RUNS):
        try:
            return orjson.loads(body)
        except orjson.JSONDecodeError:
            pass
    return jsonrpc.parse(body)


def sse_frame(message: Outbound, event_id: str | None = None) -> bytes:
    head = b"id: " + event_id.encode() + b"\n" if event_id else b""
    return head + b"event: message\ndata: " + encode(message) + b"\n\n"


class Stream:
    """One open SSE response: frames queued from any thread, ended once."""

    __slots__ = ("client", "final", "kind", "loop", "queue", "server", "session")

    def __init__(self, kind: str, client: str, loop: asyncio.AbstractEventLoop) -> None:
        self.kind, self.client, self.loop = kind, client, loop
        self.queue: asyncio.Queue[object] = asyncio.Queue()
        self.session: Session | None = None
        self.server: Server | None = None
        self.final = False  # the stream ends with the final results of its session

    def put(self, item: object) -> None:
        """From the loop thread; ends a stream whose reader stopped reading."""
        if self.queue.qsize() >= MAX_QUEUE:
            while not self.queue.empty():
                self.queue.get_nowait()
            self.queue.put_nowait(_END)
            return
        self.queue.put_nowait(item)

    def send(self, message: Outbound) -> None:
        """The core's ``send`` for this stream: thread-safe."""
        frame = sse_frame(message)
        with contextlib.suppress(RuntimeError):  # a closed loop: the server is gone
            self.loop.call_soon_threadsafe(self.put, frame)


class HttpSession:
    """A session-era conversation: the core's session, its owner and its GET stream."""

    __slots__ = (
        "client",
        "id",
        "last_seen",
        "loop",
        "owner",
        "ring",
        "see",
        "seq",
        "server",
        "session",
        "stream",
    )

    def __init__(self, id_: str, principal: Principal, client: str, server: Server,
                 loop: asyncio.AbstractEventLoop, replay: int) -> None:
        self.id, self.server, self.loop = id_, server, loop
        # The grant it was opened under: a request presenting another (a narrowed token
        # after SIGHUP, another token of the same name) ends the session (SECURITY.md).
        self.owner, self.see, self.client = principal.name, principal.see, client
        self.session: Session = server.open(self.send)
        self.last_seen = time.monotonic()
        self.ring: deque[tuple[int, bytes]] = deque(maxlen=replay)  # the replay window
        self.seq = 0
        self.stream: Stream | None = None

    def send(self, message: Outbound) -> None:
        data = encode(message)
        with contextlib.suppress(RuntimeError):
            self.loop.call_soon_threadsafe(self._push, data)

    def _push(self, data: bytes) -> None:
        self.seq += 1
        frame = b"id: %d\nevent: message\ndata: %s\n\n" % (self.seq, data)
        self.ring.append((self.seq, frame))
        if self.stream is not None:
            self.stream.put(frame)

    def replay_after(self, last: str) -> list[bytes]:
        try:
            n = int(last.strip())
        except ValueError:
            return []
        return [frame for seq, frame in self.ring if seq > n]


class Sessions:
    """Open sessions by id, capped in all and per client, expired after idle time.

    Per client (its principal, or its address without tokens) at most
    ``max_sessions_per_client``: a client at its bound gets room by ending its own
    session that has no open stream and was used longest ago, so one caller can never
    hold the sessions every other team needs (the global cap stays a last resort).
    """

    def __init__(self, config: HttpConfig) -> None:
        self.config = config
        self.by_id: dict[str, HttpSession] = {}
        self.by_client: dict[str, dict[str, None]] = {}  # client -> its ids, oldest first

    def add(self, hs: HttpSession) -> None:
        self.by_id[hs.id] = hs
        self.by_client.setdefault(hs.client, {})[hs.id] = None

    def remove(self, hs: HttpSession) -> None:
        if self.by_id.pop(hs.id, None) is None:
            return
        ids = self.by_client.get(hs.client)
        if ids is not None:
            ids.pop(hs.id, None)
            if not ids:
                del self.by_client[hs.client]

    def make_room(self, client: str) -> HttpSession | None:
        """Room for one more session of ``client``: the session ended for it (to close),
        or None when there was room; HttpError 429/503 when there is none."""
        ids = self.by_client.get(client, {})
        if len(ids) >= self.config.max_sessions_per_client:
            idle = [s for s in map(self.by_id.__getitem__, ids) if s.stream is None]
            if idle:  # the one this client used longest ago
                victim = min(idle, key=lambda s: s.last_seen)
                self.remove(victim)
                return victim
            raise HttpError(429, jsonrpc.INVALID_REQUEST, "Too Many Requests: at most "
                            f"{self.config.max_sessions_per_client} sessions per client",
                            headers=[(b"retry-after", b"5")])
        if len(self.by_id) >= self.config.max_sessions:
            raise HttpError(503, jsonrpc.INVALID_REQUEST, "Service Unavailable: too many "
                            "sessions", headers=[(b"retry-after", b"5")])
        return None

    def new_id(self) -> str:
        rid = self.config.replica_id
        token = secrets.token_urlsafe(32)  # 256 random bits, visible ASCII only
        return f"{rid}.{token}" if rid else token

    def expire(self) -> list[HttpSession]:
        cutoff = time.monotonic() - self.config.session_idle_s
        gone = [s for s in self.by_id.values() if s.last_seen < cutoff and s.stream is None]
        for s in gone:
            self.remove(s)
        return gone


def _headers(scope: Scope) -> dict[str, str]:
    """The request's headers by lower-case name (a repeated name: the last one)."""
    return {k.decode("latin-1").lower(): v.decode("latin-1").strip()
            for k, v in scope.get("headers", ())}


def _decode_name(value: str) -> str | None:
    """An ``Mcp-Name`` value, decoding the ``=?base64?...?=`` form; None if invalid."""
    if value.startswith("=?base64?") and value.endswith("?="):
        try:
            return base64.b64decode(value[9:-2], validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return None
    # visible ASCII and space (0x20-0x7E) only: for ASCII text that is what isprintable()
    # accepts (a test checks all 128 code points)
    return value if value.isascii() and value.isprintable() else None


def _status_for(reply: Json) -> int:
    """The HTTP status of a stateless reply (docs/http.md lists the mapping)."""
    err = reply.get("error") if isinstance(reply, dict) else None
    if err is None:
        return 200
    code = err.get("code")
    if code == jsonrpc.METHOD_NOT_FOUND:
        return 404
    if code in (jsonrpc.INVALID_PARAMS, jsonrpc.INVALID_REQUEST, jsonrpc.UNSUPPORTED_VERSION,
                HEADER_MISMATCH, -32021, jsonrpc.PARSE_ERROR):
        return 400
    return 500


CacheHeaders = dict[tuple[bool, int, bool], list[tuple[bytes, bytes]]]


def _cache_headers(reply: Json, *, authenticated: bool,
                   memo: CacheHeaders) -> list[tuple[bytes, bytes]]:
    """The response's headers after the status: content type and caching.

    ``memo`` (the app's) keeps the few distinct lists; they are never mutated.
    """
    result = reply.get("result")
    if not isinstance(result, dict) or "ttlMs" not in result:
        return _NO_STORE_JSON
    private = authenticated or result.get("cacheScope") == "private"
    key = (private, int(result["ttlMs"]) // 1000, authenticated)
    found = memo.get(key)
    if found is None:
        out = [JSON_CT, (b"cache-control", b"%s, max-age=%d" % (
            b"private" if private else b"public", key[1]))]
        if authenticated:
            out.append((b"vary", b"Authorization"))
        found = out if len(memo) > 64 else memo.setdefault(key, out)
    return found


_NO_STORE_JSON = [JSON_CT, NO_STORE]


class HttpApp:
    """The ASGI application (see the module docstring); ``drain()`` ends its streams."""

    def __init__(self, views: Views, config: HttpConfig, *,
                 auth: StaticTokens | JwtTokens | None = None, metrics: Metrics | None = None,
                 on_start: Callable[[], None] | None = None,
                 on_stop: Callable[[], None] | None = None,
                 ui: Callable[[Scope, Receive, SendAsgi], Awaitable[None]] | None = None
                 ) -> None:
        self.views, self.config, self.auth, self.metrics = views, config, auth, metrics
        self.ui = ui  # `serve --http --ui`: promptops.ui.mount, behind _admit (docs/ui.md)
        self._ui_session_store: UiSessions | None = None  # browser logins (ui_login.py)
        self.sessions = Sessions(config)
        self.old_sessions: dict[str, OldSession] = {}  # 2024-11-05 HTTP+SSE (http_sse.py)
        root = config.path.rsplit("/", 1)[0]
        self.sse_path, self.messages_path = root + "/sse", root + "/messages"
        self.streams: dict[Stream, None] = {}
        self.per_client: dict[str, int] = {}
        self.draining = False
        self.loop: asyncio.AbstractEventLoop | None = None
        self._on_start, self._on_stop = on_start, on_stop
        self._sweeper: asyncio.Task[None] | None = None
        self._threaded_auth = auth is not None and type(auth).__name__ == "JwtTokens"
        base = config.resource.split("://", 1)[-1].split("/", 1)[0]
        scheme = config.resource.split("://", 1)[0]
        self.prm_url = f"{scheme}://{base}/.well-known/oauth-protected-resource{config.path}"
        self._prm_paths = {"/.well-known/oauth-protected-resource",
                           "/.well-known/oauth-protected-resource" + config.path}
        self._hosts_ok: set[str] = set()  # Host values _check_host passed (at most 64)
        self._cache_memo: CacheHeaders = {}  # see _cache_headers
        self.usage: Usage | None = None  # per-prompt counters and GET /usage (usage.py)

    # ---- ASGI ---------------------------------------------------------------------------
    async def __call__(self, scope: Scope, receive: Receive, send: SendAsgi) -> None:
        kind = scope["type"]
        if kind == "http":
            await self._http(scope, receive, send)
        elif kind == "lifespan":
            await self._lifespan(receive, send)

    async def _lifespan(self, receive: Receive, send: SendAsgi) -> None:
        while True:
            msg = await receive()
            if msg["type"] == "lifespan.startup":
                self.started()
                await send({"type": "lifespan.startup.complete"})
            elif msg["type"] == "lifespan.shutdown":
                self.stopped()
                await send({"type": "lifespan.shutdown.complete"})
                return

    def stopped(self) -> None:
        """At lifespan shutdown: end the streams, stop following."""
        self.drain()
        if self._on_stop is not None:
            self._on_stop()

    def started(self) -> None:
        """At lifespan start: remember the loop, chain the signal handlers, start following."""
        self.loop = asyncio.get_running_loop()
        self._sweeper = self.loop.create_task(self._sweep())
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT):
                self._chain(sig)
            if hasattr(signal, "SIGHUP"):
                with contextlib.suppress(NotImplementedError, RuntimeError):
                    self.loop.add_signal_handler(signal.SIGHUP, self.reload_access)
        if self._on_start is not None:
            self._on_start()

    def _chain(self, sig: signal.Signals) -> None:
        """Drain our streams on ``sig``, then let the ASGI server's handler run.

        uvicorn waits for every connection to close before it sends lifespan.shutdown,
        and an open listen stream never closes by itself: so the streams end first.
        """
        previous = signal.getsignal(sig)
        loop = self.loop
        assert loop is not None

        def handler(signum: int, frame: FrameType | None) -> None:
            loop.call_soon_threadsafe(self.drain)
            if callable(previous):
                previous(signum, frame)

        signal.signal(sig, handler)

    def reload_access(self) -> None:
        """SIGHUP: read the credentials again, and end every session (and its stream) whose
        owner's grant is no longer the one it was opened under: a narrowed token keeps
        nothing of its wider view, not even the notifications of an open stream."""
        if self.auth is None:
            return
        log(self.auth.reload())
        if not isinstance(self.auth, StaticTokens):
            return  # a JWT's grant comes with each token: checked per request
        grants = self.auth.grants()
        for hs in list(self.sessions.by_id.values()):
            if grants.get(hs.owner) != hs.see:
                self._end_session(hs)
        for sid, old in list(self.old_sessions.items()):
            if grants.get(old.owner) != old.see:
                self.old_sessions.pop(sid, None)
                old.stream.put(_END)

    async def _sweep(self) -> None:
        period = max(0.05, min(30.0, self.config.session_idle_s / 4))
        while True:
            await asyncio.sleep(period)
            for s in self.sessions.expire():
                s.server.close(s.session)

    def drain(self) -> None:
        """Refuse new streams; end every open one, listen streams with their final result."""
        if self.draining:
            return
        self.draining = True
        if self._sweeper is not None:
            self._sweeper.cancel()
        for stream in list(self.streams):
            if stream.session is not None and stream.server is not None and stream.final:
                for final in stream.server.close(stream.session):
                    stream.put(sse_frame(final))
            stream.put(_END)

    # ---- routing ------------------------------------------------------------------------
    async def _http(self, scope: Scope, receive: Receive, send: SendAsgi) -> None:
        path: str = scope["path"]
        started = time.perf_counter()
        note: Note = {"rpc": None, "principal": None}
        status = 500
        try:
            if path == self.config.path or path == self.config.path + "/":
                status = await self._mcp(scope, receive, send, note)
            elif path in (self.sse_path, self.messages_path, self.messages_path + "/"):
                note["rpc"] = "http+sse"
                status = await self._old_transport(scope, receive, send, path)
            elif (refused := self._refused(scope)) is not None:
                # Every other path is guarded as /mcp is: a DNS-rebinding page must not read
                # /metrics or /readyz (package names, commits, digests) of a local server.
                status = await _respond(send, refused.status, encode(refused.body),
                                        [JSON_CT, NO_STORE])
            elif path == "/healthz":
                status = await _respond(send, 200, b'{"status":"ok"}')
            elif path == "/readyz":
                ready = bool(self.views.bundles)
                status = await _respond(send, 200 if ready else 503,
                                        b'{"status":"ready"}' if ready else
                                        b'{"status":"no bundle served yet"}')
            elif path == "/metrics" and self.metrics is not None:
                status = await _respond(send, 200, self.metrics.render(),
                                        [(b"content-type", self.metrics.content_type.encode())])
            elif path == "/usage" and self.usage is not None:
                status = await self._usage(_headers(scope), send)
            elif path in self._prm_paths and self.auth is not None:
                status = await _respond(send, 200, prm_document(
                    self.config.resource, self.config.issuer, self.config.required_scopes))
            elif path == "/hooks/git" and self.config.webhook is not None:
                status = await self._hook(scope, receive, send)
            elif self.ui is not None:
                status = await self._ui(scope, receive, send, note)
            else:
                status = await _respond(send, 404, b'{"error":"not found"}')
        finally:
            if self.config.access_log:
                self._access(scope, status, started, note)
            if self.metrics is not None and note["rpc"] is not None:
                self.metrics.observe(note["rpc"], status, time.perf_counter() - started)

    def _access(self, scope: Scope, status: int, started: float, note: Note) -> None:
        client = scope.get("client") or ("", 0)
        entry = {"ts": round(time.time(), 3), "remote": client[0], "verb": scope["method"],
                 "path": scope["path"], "status": status,
                 "ms": round((time.perf_counter() - started) * 1000, 3)}
        if note["rpc"]:
            entry["rpc"] = note["rpc"]
        if note["principal"]:
            entry["principal"] = note["principal"]
        trace = TRACE_ID.get()
        if trace:
            entry["trace"] = trace
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.write(json.dumps(entry, separators=(",", ":")) + "\n")

    async def _ui(self, scope: Scope, receive: Receive, send: SendAsgi, note: Note) -> int:
        """The web UI, for a caller admitted as /mcp admits them, seeing what they see."""
        assert self.ui is not None
        headers = _headers(scope)
        path = scope["path"]
        if self.auth is not None and path in ("/login", "/logout"):
            return await self._login(scope, receive, send, headers, note)
        if self.auth is not None and "authorization" not in headers:
            # a browser's session cookie (ui_login.py) stands for the token it logged in
            # with, authenticated again below as a header would be
            from promptops.serve import ui_login

            sid = ui_login.session_id(headers.get("cookie"))
            token = self._ui_sessions().token(sid) if sid else None
            if token is not None:
                headers["authorization"] = f"Bearer {token}"
                scope = {**scope, "promptops.signed_in": True}
            elif path in ("/static/ui.css", "/static/ui.js") and scope["method"] in (
                    "GET", "HEAD"):
                # the wheel's own assets, public anyway: the login page needs its style
                with contextlib.suppress(HttpError):
                    self._guard(headers)
                    await self.ui({**scope, "promptops.see": ()}, receive, send)
                    return 200
        try:
            principal = await self._admit(headers)
        except HttpError as exc:
            if exc.status == 401 and self.auth is not None and "text/html" in headers.get(
                    "accept", ""):  # a browser: the way in, not a JSON error
                from promptops.serve import ui_login

                return await _respond(send, 401, ui_login.page(), [
                    (b"content-type", b"text/html; charset=utf-8"), NO_STORE,
                    (b"content-security-policy", ui_login.CSP.encode()), *exc.headers])
            return await _respond(send, exc.status, encode(exc.body),
                                  [JSON_CT, NO_STORE, *exc.headers])
        note["principal"] = principal.name
        status = 500

        async def sent(message: MutableMapping[str, object]) -> None:
            nonlocal status
            code = message.get("status")
            if message["type"] == "http.response.start" and isinstance(code, int):
                status = code
            await send(message)

        await self.ui({**scope, "promptops.see": tuple(principal.see)}, receive, sent)
        return status

    def _ui_sessions(self) -> UiSessions:
        found = self._ui_session_store
        if found is None:
            from promptops.serve.ui_login import Sessions as UiSessionStore

            found = self._ui_session_store = UiSessionStore()
        return found

    async def _login(self, scope: Scope, receive: Receive, send: SendAsgi,
                     headers: dict[str, str], note: Note) -> int:
        """``GET /login``: the form; ``POST /login``: a token for a session cookie;
        ``POST /logout``: forget it (docs/ui.md). A POST must come from this origin."""
        from promptops.serve import ui_login

        html = [(b"content-type", b"text/html; charset=utf-8"), NO_STORE,
                (b"content-security-policy", ui_login.CSP.encode()),
                (b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"no-referrer")]
        try:
            self._guard(headers)
        except HttpError as exc:
            return await _respond(send, exc.status, encode(exc.body), [JSON_CT, NO_STORE])
        secure = scope.get("scheme") == "https"
        verb = scope["method"]
        if scope["path"] == "/login" and verb in ("GET", "HEAD"):
            return await _respond(send, 200, ui_login.page(), html)
        if verb != "POST":
            return await _respond(send, 405, b'{"error":"method not allowed"}',
                                  [JSON_CT, NO_STORE, (b"allow", b"GET, POST")])
        if not ui_login.same_origin(headers, scope.get("scheme", "http")):
            return await _respond(send, 403, b'{"error":"Forbidden: cross-origin form"}',
                                  [JSON_CT, NO_STORE])
        body = await _read_body(receive, ui_login.MAX_FORM)
        if body is None:
            return await _respond(send, 413, b'{"error":"form too large"}', [JSON_CT, NO_STORE])
        sid = ui_login.session_id(headers.get("cookie"))
        if scope["path"] == "/logout":
            if sid:
                self._ui_sessions().end(sid)
            gone = ui_login.clear_cookie(secure=secure)
            return await _respond(send, 303, b"", [*html, (b"location", b"/login"),
                                                   (b"set-cookie", gone)])
        token = ui_login.form_token(body)
        try:
            if token is None:
                raise HttpError(401, jsonrpc.INVALID_REQUEST, "no token given")
            principal = await self._admit({**headers, "authorization": f"Bearer {token}"})
        except HttpError:
            return await _respond(send, 401, ui_login.page("That token is not accepted."),
                                  html)
        assert token is not None
        note["principal"] = principal.name
        if sid:
            self._ui_sessions().end(sid)  # a new login: a new id (no session fixation)
        new = self._ui_sessions().start(token)
        cookie = ui_login.set_cookie(new, secure=secure)
        return await _respond(send, 303, b"", [*html, (b"location", b"/"),
                                               (b"set-cookie", cookie)])

    async def _hook(self, scope: Scope, receive: Receive, send: SendAsgi) -> int:
        assert self.config.webhook is not None
        if scope["method"] != "POST":
            return await _respond(send, 405, b'{"error":"POST only"}', [(b"allow", b"POST")])
        body = await _read_body(receive, 25 * 1024 * 1024)
        if body is None:
            return await _respond(send, 413, b'{"error":"body too large"}')
        status = self.config.webhook(_headers(scope), body)
        return await _respond(send, status, b'{"status":"accepted"}' if status < 300
                              else b'{"error":"unauthorized"}')

    def _refused(self, scope: Scope) -> HttpError | None:
        """The guard's refusal of a request outside the MCP endpoints, or None."""
        try:
            self._guard(_headers(scope))
        except HttpError as exc:
            return exc
        return None

    def _guard(self, headers: dict[str, str]) -> None:
        """DNS-rebinding protection: Origin (every bind) and Host (loopback binds)."""
        origin = headers.get("origin")
        if origin is not None and origin != "null" and not self._origin_ok(origin):
            raise HttpError(403, jsonrpc.INVALID_REQUEST, "Forbidden: Origin not allowed")
        raw = headers.get("host", "")
        if raw in self._hosts_ok:  # a Host this check let through before (few distinct ones)
            return
        self._check_host(raw.lower())
        if len(self._hosts_ok) < 64:
            self._hosts_ok.add(raw)

    def _check_host(self, host: str) -> None:
        if self.config.allow_hosts:
            if host not in self.config.allow_hosts and host.rsplit(":", 1)[0] not in \
                    self.config.allow_hosts:
                raise HttpError(403, jsonrpc.INVALID_REQUEST, "Forbidden: Host not allowed")
        elif self.config.loopback and host and _hostname(host) not in LOOPBACK_HOSTS:
            raise HttpError(403, jsonrpc.INVALID_REQUEST, "Forbidden: Host not allowed")

    def _origin_ok(self, origin: str) -> bool:
        origin = origin.rstrip("/")
        if origin in self.config.allow_origins or "*" in self.config.allow_origins:
            return True
        if self.config.loopback:
            rest = origin.split("://", 1)[-1]
            return _hostname(rest) in LOOPBACK_HOSTS
        return False

    async def _usage(self, headers: dict[str, str], send: SendAsgi) -> int:
        """GET /usage: with tokens or OAuth on, only for a credential that sees every prompt.

        The report names every prompt with its clients and principals: a team whose grant is
        a part of the packages must not learn the rest (issue 23, invariant 3).
        """
        assert self.usage is not None
        if self.auth is not None:
            try:
                principal = await self._admit(headers)
            except HttpError as exc:
                return await _respond(send, exc.status, encode(exc.body),
                                      [JSON_CT, NO_STORE, *exc.headers])
            if principal.see != EVERYTHING:
                return await _respond(send, 403, encode(jsonrpc.error(
                    None, jsonrpc.INVALID_REQUEST, "the usage report covers every prompt: it "
                    "needs a credential that sees every prompt")), [JSON_CT, NO_STORE])
        return await _respond(send, 200, encode(self.usage.report()), _NO_STORE_JSON)

    async def _admit(self, headers: dict[str, str]) -> Principal:
        """The caller, once Origin/Host pass: 403, or 401/403 with WWW-Authenticate."""
        self._guard(headers)
        if self.auth is None:
            return ANONYMOUS
        try:
            return await self._principal(headers)
        except AuthError as exc:
            if exc.detail:  # the library's reason may quote the token: escaped, bounded
                log(f"token refused: {json.dumps(exc.detail[:300])}")
            challenge = www_authenticate(exc, self.prm_url, self.config.required_scopes)
            raise HttpError(exc.status, jsonrpc.INVALID_REQUEST, exc.description,
                            headers=[(b"www-authenticate", challenge.encode())]) from None

    async def _principal(self, headers: dict[str, str]) -> Principal:
        assert self.auth is not None
        header = headers.get("authorization")
        if self._threaded_auth:
            return await asyncio.to_thread(self.auth.authenticate, header)
        return self.auth.authenticate(header)

    async def _mcp(self, scope: Scope, receive: Receive, send: SendAsgi,
                   note: Note) -> int:
        headers = _headers(scope)
        try:
            if self.auth is None:  # the guard alone: no coroutine to await
                self._guard(headers)
                principal = ANONYMOUS
            else:
                principal = await self._admit(headers)
                note["principal"] = principal.name
                if self.usage is not None:
                    PRINCIPAL.set(principal.name)
            if self.usage is not None and self.usage.tracing is not None:
                TRACE_HEADER.set((headers.get("traceparent"), headers.get("tracestate")))
            verb = scope["method"]
            if verb == "POST":
                return await self._post(scope, receive, send, headers, principal, note)
            if verb == "GET":
                return await self._get(scope, receive, send, headers, principal)
            if verb == "DELETE":
                return await self._delete(send, headers, principal)
            raise HttpError(405, jsonrpc.INVALID_REQUEST, "Method Not Allowed",
                            headers=[(b"allow", b"GET, POST, DELETE")])
        except HttpError as exc:
            return await _respond(send, exc.status, encode(exc.body),
                                  [JSON_CT, NO_STORE, *exc.headers])

    async def _old_transport(self, scope: Scope, receive: Receive, send: SendAsgi,
                             path: str) -> int:
        """2024-11-05 HTTP+SSE: GET the stream, POST messages (transports/http_sse.py)."""
        from promptops.serve.transports import http_sse

        headers = _headers(scope)
        try:
            principal = await self._admit(headers)
            if path == self.sse_path and scope["method"] == "GET":
                return await http_sse.open_stream(self, scope, receive, send, principal,
                                                  self.messages_path + "/")
            if path != self.sse_path and scope["method"] == "POST":
                body = await _read_body(receive, self.config.max_body)
                if body is None:
                    raise HttpError(413, jsonrpc.INVALID_REQUEST,
                                    f"Request body over {self.config.max_body} bytes")
                status = http_sse.post_message(self, scope, principal, body)
                text = {202: b"Accepted", 400: b"Bad Request: session_id",
                        404: b"Could not find session"}[status]
                return await _respond(send, status, text, [(b"content-type", b"text/plain")])
            raise HttpError(405, jsonrpc.INVALID_REQUEST, "Method Not Allowed")
        except HttpError as exc:
            return await _respond(send, exc.status, encode(exc.body),
                                  [JSON_CT, NO_STORE, *exc.headers])

    # ---- POST ---------------------------------------------------------------------------
    async def _post(self, scope: Scope, receive: Receive, send: SendAsgi,
                    headers: dict[str, str], principal: Principal,
                    note: Note) -> int:
        ctype = headers.get("content-type", "")
        if ctype != "application/json" and \
                ctype.split(";", 1)[0].strip().lower() != "application/json":
            raise HttpError(415, jsonrpc.INVALID_REQUEST,
                            "Unsupported Media Type: send Content-Type: application/json")
        accept = headers.get("accept", "")
        if accept and "application/json" not in accept and "*/*" not in accept and \
                "application/*" not in accept:
            raise HttpError(406, jsonrpc.INVALID_REQUEST,
                            "Not Acceptable: Accept must include application/json")
        first = await receive()
        body: bytes | None = first.get("body", b"")
        if first["type"] != "http.request" or first.get("more_body") or \
                len(body or b"") > self.config.max_body:  # chunked, too long, or gone
            body = await _read_body(receive, self.config.max_body, first)
        if body is None:
            raise HttpError(413, jsonrpc.INVALID_REQUEST,
                            f"Request body over {self.config.max_body} bytes")
        try:
            msg = parse(body)
        except jsonrpc.RpcError as exc:
            raise HttpError(400, exc.code, exc.message) from None
        if isinstance(msg, dict):
            method = msg.get("method")
            # a label value and an access-log field: one of the names we answer, or "other"
            note["rpc"] = None if not isinstance(method, str) else \
                method if method in KNOWN_METHODS else "other"
        version = headers.get("mcp-protocol-version")
        if self._stateless(msg, version, headers):
            return await self._stateless_post(scope, receive, send, headers, principal, msg,
                                              version)
        return await self._session_post(scope, send, headers, principal, msg, version)

    @staticmethod
    def _stateless(msg: object, version: str | None, headers: dict[str, str]) -> bool:
        if version in STATELESS_REVISIONS:
            return True
        if not isinstance(msg, dict):
            return False
        params = msg.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        if isinstance(meta, dict) and META_VERSION in meta:
            return True
        return msg.get("method") == "server/discover" and "mcp-session-id" not in headers

    async def _stateless_post(self, scope: Scope, receive: Receive, send: SendAsgi,
                              headers: dict[str, str], principal: Principal, msg: object,
                              version: str | None) -> int:
        if not isinstance(msg, dict):
            raise HttpError(400, jsonrpc.INVALID_REQUEST,
                            f"{LATEST_STATELESS} takes one JSON-RPC message per request")
        rid = msg.get("id")
        method = msg.get("method")
        if "id" not in msg or not isinstance(method, str):  # a notification or a response
            return await _respond(send, 202, b"")
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        assert isinstance(params, dict)
        meta = params.get("_meta")
        body_version = meta.get(META_VERSION) if isinstance(meta, dict) else None
        if version is None:
            raise HttpError(400, HEADER_MISMATCH,
                            "Header mismatch: MCP-Protocol-Version header is required", rid)
        if body_version is not None and body_version != version:
            raise HttpError(400, HEADER_MISMATCH,
                            f"Header mismatch: MCP-Protocol-Version header value {version!r} "
                            f"does not match body value {str(body_version)!r}", rid)
        if version not in SUPPORTED:
            raise HttpError(400, jsonrpc.UNSUPPORTED_VERSION, "Unsupported protocol version",
                            rid, {"supported": list(SUPPORTED), "requested": version})
        hmethod = headers.get("mcp-method")
        if hmethod is None:
            raise HttpError(400, HEADER_MISMATCH, "Header mismatch: Mcp-Method header is "
                            "required", rid)
        if hmethod != method:
            raise HttpError(400, HEADER_MISMATCH, f"Header mismatch: Mcp-Method header value "
                            f"{hmethod!r} does not match body value {method!r}", rid)
        key = NAMED_PARAM.get(method)
        if key is not None:
            raw = headers.get("mcp-name")
            if raw is None:
                raise HttpError(400, HEADER_MISMATCH,
                                "Header mismatch: Mcp-Name header is required", rid)
            name = _decode_name(raw)
            if name is None or name != params.get(key):
                raise HttpError(400, HEADER_MISMATCH, f"Header mismatch: Mcp-Name header value "
                                f"{raw!r} does not match body value {params.get(key)!r}", rid)
        try:
            envelope(params)
        except jsonrpc.RpcError as exc:
            raise HttpError(400, exc.code, exc.message, rid, exc.data) from None
        server = self.views.server(principal.see)
        if method == "subscriptions/listen":
            client = self._client_key(principal, scope.get("client"))
            return await self._listen(receive, send, server, client, msg)
        session = server.open(_discard)
        try:
            replies = server.handle(session, msg)
        except Exception:
            log_bug()
            replies = list(jsonrpc.internal_error(msg))
        finally:
            server.close(session)
        out = replies[0] if replies else jsonrpc.error(rid, jsonrpc.INTERNAL_ERROR, "no reply")
        assert isinstance(out, dict)
        data, status = encode(out), _status_for(out)
        await send({"type": "http.response.start", "status": status, "headers": [
            *_cache_headers(out, authenticated=self.auth is not None, memo=self._cache_memo),
            (b"content-length", b"%d" % len(data))]})
        await send({"type": "http.response.body", "body": data})
        return status

    def _client_key(self, principal: Principal, scope_client: object) -> str:
        if self.auth is not None:
            return principal.name
        return str(scope_client[0]) if isinstance(scope_client, (list, tuple)) else "?"

    def _open_stream(self, kind: str, client: str) -> Stream:
        if self.draining:
            raise HttpError(503, jsonrpc.INVALID_REQUEST, "Service Unavailable: shutting down",
                            headers=[(b"retry-after", b"1")])
        if self.per_client.get(client, 0) >= self.config.max_streams:
            raise HttpError(429, jsonrpc.INVALID_REQUEST, f"Too Many Requests: at most "
                            f"{self.config.max_streams} open streams per client")
        assert self.loop is not None, "the app was not started (ASGI lifespan)"
        stream = Stream(kind, client, self.loop)
        self.streams[stream] = None
        self.per_client[client] = self.per_client.get(client, 0) + 1
        if self.metrics is not None:
            self.metrics.streams.labels(kind).inc()
        return stream

    def _close_stream(self, stream: Stream) -> None:
        if self.streams.pop(stream, _END) is _END:
            return
        left = self.per_client.get(stream.client, 1) - 1
        if left > 0:
            self.per_client[stream.client] = left
        else:
            self.per_client.pop(stream.client, None)
        if self.metrics is not None:
            self.metrics.streams.labels(stream.kind).dec()

    async def _listen(self, receive: Receive, send: SendAsgi, server: Server, client: str,
                      msg: Json) -> int:
        stream = self._open_stream("listen", client)
        session = server.open(stream.send)
        stream.session, stream.server, stream.final = session, server, True
        try:
            try:
                replies = server.handle(session, msg)
            except Exception:
                log_bug()
                replies = list(jsonrpc.internal_error(msg))
            ack = replies[0] if replies else None
            if not isinstance(ack, dict) or "error" in ack or "result" in ack:
                out = ack if isinstance(ack, dict) else jsonrpc.internal_error(msg)[0]
                return await _respond(send, _status_for(out), encode(out),
                                      [JSON_CT, NO_STORE])
            await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
            await send({"type": "http.response.body", "body": sse_frame(ack),
                        "more_body": True})
            await self._pump(stream, receive, send)
            return 200
        finally:
            # Closed by its client (HTTP cancellation: nothing more is sent for it), ended
            # for a reader that fell behind, or drained (then already closed): either way
            # the session and its subscription end with the stream.
            server.close(session)
            self._close_stream(stream)

    async def _pump(self, stream: Stream, receive: Receive, send: SendAsgi) -> str:
        """Write the stream's frames until it ends or its client leaves."""
        watcher = asyncio.ensure_future(_until_disconnect(receive, stream))
        try:
            while True:
                try:
                    async with asyncio.timeout(self.config.keepalive_s):
                        item = await stream.queue.get()
                except TimeoutError:
                    item = b": keep-alive\n\n"
                if item is _END:
                    await send({"type": "http.response.body", "body": b"", "more_body": False})
                    return "ended"
                if item is _DISCONNECT:
                    return "disconnect"
                assert isinstance(item, bytes)
                await send({"type": "http.response.body", "body": item, "more_body": True})
        finally:
            watcher.cancel()

    # ---- the session era ------------------------------------------------------------------
    def _session(self, headers: dict[str, str], principal: Principal) -> HttpSession:
        sid = headers.get("mcp-session-id")
        if sid is None:
            raise HttpError(400, jsonrpc.INVALID_REQUEST, "Bad Request: Missing session ID "
                            "(send initialize first)")
        found = self.sessions.by_id.get(sid)
        if found is None or found.owner != principal.name:  # another caller's id: not found
            raise HttpError(404, jsonrpc.INVALID_REQUEST, "Session not found")
        if found.see != principal.see:
            # The credential's grant is not the one the session was opened under (narrowed
            # and reloaded, or another token of the same name): the session ends, and the
            # client starts a new one under its current grant.
            self._end_session(found)
            raise HttpError(404, jsonrpc.INVALID_REQUEST, "Session not found")
        found.last_seen = time.monotonic()
        return found

    def _end_session(self, hs: HttpSession) -> None:
        self.sessions.remove(hs)
        hs.server.close(hs.session)
        if hs.stream is not None:
            hs.stream.put(_END)

    async def _session_post(self, scope: Scope, send: SendAsgi, headers: dict[str, str],
                            principal: Principal, msg: object, version: str | None) -> int:
        if version is not None and version not in SESSION_REVISIONS:
            raise HttpError(400, jsonrpc.UNSUPPORTED_VERSION,
                            f"Bad Request: unsupported MCP-Protocol-Version {version!r}",
                            data={"supported": list(SUPPORTED), "requested": version})
        is_init = isinstance(msg, dict) and msg.get("method") == "initialize" and "id" in msg
        extra: list[tuple[bytes, bytes]] = []
        if is_init and "mcp-session-id" not in headers:
            client = self._client_key(principal, scope.get("client"))
            evicted = self.sessions.make_room(client)
            if evicted is not None:
                evicted.server.close(evicted.session)
            assert self.loop is not None
            hs = HttpSession(self.sessions.new_id(), principal, client,
                             self.views.server(principal.see), self.loop, self.config.replay)
            replies = self._handle(hs, msg)
            if replies and isinstance(replies[0], dict) and "result" in replies[0]:
                self.sessions.add(hs)
                extra.append((b"mcp-session-id", hs.id.encode()))
            else:
                hs.server.close(hs.session)
        else:
            hs = self._session(headers, principal)
            replies = self._handle(hs, msg)
        if not replies:
            return await _respond(send, 202, b"", extra)
        return await _respond(send, 200, encode(replies[0]), [JSON_CT, NO_STORE, *extra])

    @staticmethod
    def _handle(hs: HttpSession, msg: object) -> list[Outbound]:
        try:
            return hs.server.handle(hs.session, msg)
        except Exception:
            log_bug()
            return list(jsonrpc.internal_error(msg))

    async def _get(self, scope: Scope, receive: Receive, send: SendAsgi,
                   headers: dict[str, str], principal: Principal) -> int:
        if headers.get("mcp-protocol-version") in STATELESS_REVISIONS:
            raise HttpError(405, jsonrpc.INVALID_REQUEST, f"Method Not Allowed: {LATEST_STATELESS}"
                            " has no GET stream (use subscriptions/listen)",
                            headers=[(b"allow", b"POST")])
        if "text/event-stream" not in headers.get("accept", "text/event-stream"):
            raise HttpError(406, jsonrpc.INVALID_REQUEST,
                            "Not Acceptable: Accept must include text/event-stream")
        hs = self._session(headers, principal)
        if hs.stream is not None:
            raise HttpError(409, jsonrpc.INVALID_REQUEST,
                            "Conflict: Only one SSE stream is allowed per session")
        stream = self._open_stream("session", self._client_key(principal, scope.get("client")))
        hs.stream = stream
        try:
            await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
            last = headers.get("last-event-id")
            for frame in hs.replay_after(last) if last else ():
                stream.put(frame)
            await send({"type": "http.response.body", "body": b"", "more_body": True})
            await self._pump(stream, receive, send)
            return 200
        finally:
            hs.stream = None
            hs.last_seen = time.monotonic()
            self._close_stream(stream)

    async def _delete(self, send: SendAsgi, headers: dict[str, str],
                      principal: Principal) -> int:
        self._end_session(self._session(headers, principal))
        return await _respond(send, 200, b"")


_DISCONNECT = object()


async def _until_disconnect(receive: Receive, stream: Stream) -> None:
    while True:
        msg = await receive()
        if msg["type"] == "http.disconnect":
            stream.queue.put_nowait(_DISCONNECT)
            return


def _hostname(authority: str) -> str:
    authority = authority.lower()
    if authority.startswith("["):
        return authority.split("]", 1)[0] + "]"
    return authority.rsplit(":", 1)[0] if authority.count(":") == 1 else authority


def _discard(message: Outbound) -> None:
    """A throwaway session's ``send``: a stateless request has no stream of its own."""


async def _read_body(receive: Receive, limit: int,
                     first: MutableMapping[str, Any] | None = None) -> bytes | None:
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
        chunk = msg.get("body", b"")
        size += len(chunk)
        if size <= limit:
            chunks.append(chunk)
        if not msg.get("more_body"):
            break
    if size > limit:
        return None
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


async def _respond(send: SendAsgi, status: int, body: bytes,
                   headers: Iterable[tuple[bytes, bytes]] | None = None) -> int:
    hdrs = [*headers, (b"content-length", b"%d" % len(body))] if headers is not None else \
        [JSON_CT, (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": status, "headers": hdrs})
    await send({"type": "http.response.body", "body": body})
    return status
