"""The 2024-11-05 HTTP+SSE transport (two endpoints), over the same sessions as the rest.

Deprecated by 2026-07-28 but still the only HTTP transport of 2024-11-05 clients: ``GET
/sse`` opens a stream whose first event (``endpoint``) names where to POST, ``POST
/messages?session_id=ID`` answers 202 and every reply travels as an ``event: message`` on
that stream. The session lives exactly as long as its stream. It is the smallest adapter
the core allows: a :class:`~promptops.serve.session.Session` whose ``send`` is the stream,
bounded like every other stream (per-client count, reader lag), bound to its principal.
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING
from urllib.parse import parse_qs

from promptops.serve import jsonrpc

if TYPE_CHECKING:
    from promptops.serve.auth import Principal
    from promptops.serve.server import Server
    from promptops.serve.session import Session
    from promptops.serve.transports.http import HttpApp, Receive, Scope, SendAsgi, Stream


class OldSession:
    __slots__ = ("owner", "see", "server", "session", "stream")

    def __init__(self, principal: Principal, server: Server, session: Session,
                 stream: Stream) -> None:
        self.owner, self.see = principal.name, principal.see  # the grant it was opened under
        self.server, self.session, self.stream = server, session, stream


async def open_stream(app: HttpApp, scope: Scope, receive: Receive, send: SendAsgi,
                      principal: Principal, messages_path: str) -> int:
    """GET /sse: the endpoint event, then every reply and notification of the session."""
    from promptops.serve.transports.http import SSE_HEADERS

    stream = app._open_stream("sse", app._client_key(principal, scope.get("client")))
    server = app.views.server(principal.see)
    session = server.open(stream.send)
    sid = secrets.token_hex(16)
    app.old_sessions[sid] = OldSession(principal, server, session, stream)
    try:
        await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
        await send({"type": "http.response.body", "more_body": True,
                    "body": f"event: endpoint\ndata: {messages_path}?session_id={sid}\n\n"
                    .encode()})
        await app._pump(stream, receive, send)
        return 200
    finally:
        app.old_sessions.pop(sid, None)
        server.close(session)
        app._close_stream(stream)


def post_message(app: HttpApp, scope: Scope, principal: Principal, body: bytes) -> int:
    """POST /messages?session_id=ID: 202, the replies go to the session's stream."""
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    sid = (query.get("session_id") or [""])[0]
    if not sid:
        return 400
    old = app.old_sessions.get(sid)
    if old is None or old.owner != principal.name:
        return 404
    if old.see != principal.see:  # another grant than the stream's: the stream ends
        from promptops.serve.transports.http import _END

        app.old_sessions.pop(sid, None)
        old.stream.put(_END)
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
