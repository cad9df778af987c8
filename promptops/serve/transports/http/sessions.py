"""The session era over HTTP (2025-03-26 .. 2025-11-25 Streamable HTTP).

``initialize`` without ``Mcp-Session-Id`` opens an :class:`HttpSession` (the core's
:class:`~promptops.serve.session.Session`, its owner's grant, a replay ring of its last
``replay`` events); every later POST, GET (its one SSE stream, resumed after
``Last-Event-ID``) and DELETE names it. :class:`Sessions` holds them, capped in all and per
client, and expires idle ones. :class:`SessionEra` answers the three verbs (the SDK's
``streamable_http_manager.py`` shape) over the app's
:class:`~promptops.serve.transports.http.streams.StreamRegistry`.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections import deque
from collections.abc import Sequence
from typing import TYPE_CHECKING

from promptops.serve import jsonrpc
from promptops.serve.cycle import NOTHING, WHOLE, Replier, length
from promptops.serve.revisions import (
    LATEST_STATELESS,
    SESSION_REVISIONS,
    STATELESS_REVISIONS,
    SUPPORTED,
)
from promptops.serve.transports.http.base import (
    JSON_CT,
    NO_STORE,
    NO_STORE_JSON,
    SSE_HEADERS,
    Encode,
    HttpConfig,
    HttpError,
    Receive,
    Scope,
    SendAsgi,
    client_key,
    respond,
)

if TYPE_CHECKING:
    from promptops.serve.auth import Principal
    from promptops.serve.jsonrpc import Json, Outbound, RequestId
    from promptops.serve.server import Server
    from promptops.serve.session import Session
    from promptops.serve.transports.http.streams import Stream, StreamRegistry
    from promptops.serve.views import Views


class HttpSession:
    """A session-era conversation: the core's session, its owner and its GET stream."""

    __slots__ = ("client", "encode", "id", "last_seen", "loop", "owner", "ring", "see", "seq",
                 "server", "session", "stream")

    def __init__(self, id_: str, principal: Principal, client: str, server: Server,
                 loop: asyncio.AbstractEventLoop, replay: int, encode: Encode) -> None:
        self.id, self.server, self.loop, self.encode = id_, server, loop, encode
        # The grant it was opened under: a request presenting another (a narrowed token
        # after SIGHUP, another token of the same name) ends the session (SECURITY.md).
        self.owner, self.see, self.client = principal.name, principal.see, client
        self.session: Session = server.open(self.send)
        self.last_seen = time.monotonic()
        self.ring: deque[tuple[int, bytes]] = deque(maxlen=replay)  # the replay window
        self.seq = 0
        self.stream: Stream | None = None

    def send(self, message: Outbound) -> None:
        data = self.encode(message)
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

    def end(self) -> None:
        self.server.close(self.session)
        if self.stream is not None:
            self.stream.end()


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


class SessionEra:
    """POST, GET and DELETE of the session era, over the app's stream registry."""

    def __init__(self, views: Views, config: HttpConfig, streams: StreamRegistry, *,
                 authenticated: bool, replier: Replier | None = None) -> None:
        self.views, self.config, self.streams = views, config, streams
        self.authenticated = authenticated
        self._reply = (replier or Replier()).now  # the usual reply on uvicorn's cycle
        self.sessions = Sessions(config)
        self._sweeper: asyncio.Task[None] | None = None

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        self._sweeper = loop.create_task(self._sweep())

    def stop(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()

    async def _sweep(self) -> None:
        period = max(0.05, min(30.0, self.config.session_idle_s / 4))
        while True:
            await asyncio.sleep(period)
            for s in self.sessions.expire():
                s.server.close(s.session)

    def regrant(self, grants: dict[str, tuple[str, ...]]) -> None:
        """End every session whose owner's grant is no longer the one it was opened under."""
        for hs in list(self.sessions.by_id.values()):
            if grants.get(hs.owner) != hs.see:
                self._end(hs)

    def _end(self, hs: HttpSession) -> None:
        self.sessions.remove(hs)
        hs.end()

    def _find(self, headers: dict[str, str], principal: Principal) -> HttpSession:
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
            self._end(found)
            raise HttpError(404, jsonrpc.INVALID_REQUEST, "Session not found")
        found.last_seen = time.monotonic()
        return found

    async def post(self, scope: Scope, send: SendAsgi, headers: dict[str, str],
                   principal: Principal, msg: object, version: str | None,
                   usual: tuple[str, RequestId, Json] | None = None) -> int:
        """``usual``: what :func:`~promptops.serve.jsonrpc.usual` read of ``msg``, when the
        endpoint read it: answered by the core's :meth:`~promptops.serve.server.Server.answer`
        without reading it again (its one reply has the request's id: nothing for
        ``Server.handle`` to finish); anything else goes to ``Server.handle``."""
        if version is not None and version not in SESSION_REVISIONS:
            raise HttpError(400, jsonrpc.UNSUPPORTED_VERSION,
                            f"Bad Request: unsupported MCP-Protocol-Version {version!r}",
                            data={"supported": list(SUPPORTED), "requested": version})
        is_init = usual[0] == "initialize" if usual is not None else \
            isinstance(msg, dict) and msg.get("method") == "initialize" and "id" in msg
        # the new session's id header, else nothing: one empty tuple, not a list a request
        extra: Sequence[tuple[bytes, bytes]] = ()
        opened = is_init and "mcp-session-id" not in headers
        if opened:
            client = client_key(principal, scope, authenticated=self.authenticated)
            evicted = self.sessions.make_room(client)
            if evicted is not None:
                evicted.server.close(evicted.session)
            assert self.streams.loop is not None
            hs = HttpSession(self.sessions.new_id(), principal, client,
                             self.views.server(principal.see), self.streams.loop,
                             self.config.replay, self.streams.encode)
            usual = None  # read by the core, as a new session's first message always was
        else:
            hs = self._find(headers, principal)
        try:
            if usual is not None:
                replies: list[Outbound] = hs.server.answer(  # type: ignore[assignment]
                    hs.session, usual[0], usual[1], usual[2])
            else:
                replies = hs.server.handle(hs.session, msg)
        except Exception:
            from promptops.serve.log import log_bug

            log_bug()
            replies = list(jsonrpc.internal_error(msg))
        if opened:
            if replies and isinstance(replies[0], dict) and "result" in replies[0]:
                self.sessions.add(hs)
                extra = [(b"mcp-session-id", hs.id.encode())]
            else:
                hs.server.close(hs.session)
        if not replies:
            return await respond(send, 202, b"", extra)
        try:  # Codec.encode without its frame
            data = self.streams.dumps(replies[0])
        except TypeError:
            data = self.streams.encode(replies[0])
        # respond()'s 200 without its coroutine, written on uvicorn's cycle as its two
        # sends write it when it is the usual reply (cycle.py; issue 26)
        head = [JSON_CT, NO_STORE, *extra] if extra else NO_STORE_JSON
        sent = self._reply(send, 200, head, data)
        if sent != WHOLE:
            if sent == NOTHING:
                await send({"type": "http.response.start", "status": 200,
                            "headers": [*head, length(data)]})
            await send({"type": "http.response.body", "body": data})
        return 200

    async def get(self, scope: Scope, receive: Receive, send: SendAsgi,
                  headers: dict[str, str], principal: Principal) -> int:
        if headers.get("mcp-protocol-version") in STATELESS_REVISIONS:
            raise HttpError(405, jsonrpc.INVALID_REQUEST, f"Method Not Allowed: {LATEST_STATELESS}"
                            " has no GET stream (use subscriptions/listen)",
                            headers=[(b"allow", b"POST")])
        if "text/event-stream" not in headers.get("accept", "text/event-stream"):
            raise HttpError(406, jsonrpc.INVALID_REQUEST,
                            "Not Acceptable: Accept must include text/event-stream")
        hs = self._find(headers, principal)
        if hs.stream is not None:
            raise HttpError(409, jsonrpc.INVALID_REQUEST,
                            "Conflict: Only one SSE stream is allowed per session")
        stream = self.streams.open(
            "session", client_key(principal, scope, authenticated=self.authenticated))
        hs.stream = stream
        try:
            await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
            last = headers.get("last-event-id")
            for frame in hs.replay_after(last) if last else ():
                stream.put(frame)
            await send({"type": "http.response.body", "body": b"", "more_body": True})
            await self.streams.pump(stream, receive, send)
            return 200
        finally:
            hs.stream = None
            hs.last_seen = time.monotonic()
            self.streams.close(stream)

    async def delete(self, send: SendAsgi, headers: dict[str, str],
                     principal: Principal) -> int:
        self._end(self._find(headers, principal))
        return await respond(send, 200, b"")
