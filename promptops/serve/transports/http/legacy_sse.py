"""The 2024-11-05 HTTP+SSE transport (two endpoints), over the same sessions as the rest.

Deprecated by 2026-07-28 but still the only HTTP transport of 2024-11-05 clients: ``GET
/sse`` opens a stream whose first event (``endpoint``) names where to POST, ``POST
/messages?session_id=ID`` answers 202 and every reply travels as an ``event: message`` on
that stream. The session lives exactly as long as its stream. It is the smallest adapter
the core allows: a :class:`~promptops.serve.session.Session` whose ``send`` is a stream of
the app's :class:`~promptops.serve.transports.http.streams.StreamRegistry` (per-client
count, reader lag, drain), bound to its principal.
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING
from urllib.parse import parse_qs

from promptops.serve import jsonrpc
from promptops.serve.transports.http.base import (
    SSE_HEADERS,
    HttpError,
    Note,
    Receive,
    Scope,
    SendAsgi,
    client_key,
    read_body,
    respond,
)
from promptops.serve.transports.http.guard import PRINCIPAL_KEY

if TYPE_CHECKING:
    from promptops.serve.auth import Principal
    from promptops.serve.server import Server
    from promptops.serve.session import Session
    from promptops.serve.transports.http.streams import Stream, StreamRegistry
    from promptops.serve.views import Views

_TEXT = {202: b"Accepted", 400: b"Bad Request: session_id", 404: b"Could not find session"}


class OldSession:
    __slots__ = ("owner", "see", "server", "session", "stream")

    def __init__(self, principal: Principal, server: Server, session: Session,
                 stream: Stream) -> None:
        self.owner, self.see = principal.name, principal.see  # the grant it was opened under
        self.server, self.session, self.stream = server, session, stream


class LegacySse:
    """``GET <root>/sse`` and ``POST <root>/messages``, beside the endpoint path."""

    def __init__(self, views: Views, streams: StreamRegistry, *, endpoint: str,
                 max_body: int, authenticated: bool) -> None:
        self.views, self.streams, self.max_body = views, streams, max_body
        self.authenticated = authenticated
        root = endpoint.rsplit("/", 1)[0]
        self.sse_path, self.messages_path = root + "/sse", root + "/messages"
        self.paths = (self.sse_path, self.messages_path, self.messages_path + "/")
        self.sessions: dict[str, OldSession] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: SendAsgi, note: Note) -> int:
        """One request to either path, from a caller the gate admitted (guard.Admitted)."""
        principal: Principal = scope[PRINCIPAL_KEY]
        path, verb = scope["path"], scope["method"]
        if path == self.sse_path and verb == "GET":
            return await self.open_stream(scope, receive, send, principal)
        if path != self.sse_path and verb == "POST":
            body = await read_body(receive, self.max_body)
            if body is None:
                raise HttpError(413, jsonrpc.INVALID_REQUEST,
                                f"Request body over {self.max_body} bytes")
            status = self.post_message(scope, principal, body)
            return await respond(send, status, _TEXT[status], [(b"content-type", b"text/plain")])
        raise HttpError(405, jsonrpc.INVALID_REQUEST, "Method Not Allowed")

    async def open_stream(self, scope: Scope, receive: Receive, send: SendAsgi,
                          principal: Principal) -> int:
        """GET /sse: the endpoint event, then every reply and notification of the session."""
        stream = self.streams.open(
            "sse", client_key(principal, scope, authenticated=self.authenticated))
        server = self.views.server(principal.see)
        session = server.open(stream.send)
        sid = secrets.token_hex(16)
        self.sessions[sid] = OldSession(principal, server, session, stream)
        try:
            await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
            await send({"type": "http.response.body", "more_body": True,
                        "body": f"event: endpoint\ndata: {self.messages_path}/?session_id={sid}"
                        "\n\n".encode()})
            await self.streams.pump(stream, receive, send)
            return 200
        finally:
            self.sessions.pop(sid, None)
            server.close(session)
            self.streams.close(stream)

    def post_message(self, scope: Scope, principal: Principal, body: bytes) -> int:
        """POST /messages?session_id=ID: 202, the replies go to the session's stream."""
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        sid = (query.get("session_id") or [""])[0]
        if not sid:
            return 400
        old = self.sessions.get(sid)
        if old is None or old.owner != principal.name:
            return 404
        if old.see != principal.see:  # another grant than the stream's: the stream ends
            self.sessions.pop(sid, None)
            old.stream.end()
            return 404
        try:
            message = jsonrpc.parse(body)
        except jsonrpc.RpcError as exc:
            old.stream.send(old.server.reject(old.session, exc))
            return 400
        try:
            replies = old.server.handle(old.session, message)
        except Exception:
            from promptops.serve.log import log_bug

            log_bug()
            replies = list(jsonrpc.internal_error(message))
        for reply in replies:
            old.stream.send(reply)
        return 202

    def regrant(self, grants: dict[str, tuple[str, ...]]) -> None:
        """End every stream whose owner's grant is no longer the one it was opened under."""
        for sid, old in list(self.sessions.items()):
            if grants.get(old.owner) != old.see:
                self.sessions.pop(sid, None)
                old.stream.end()
