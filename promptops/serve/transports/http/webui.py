"""The web UI behind ``serve --http --ui``: the catalog pages, admitted as /mcp admits.

Every path no other route answers goes to the UI (``promptops.ui.mount``), for a caller
the app's :class:`~promptops.serve.transports.http.guard.AuthGate` admits, seeing what
that caller sees. With auth on, a browser (which sends no bearer token by itself) logs in
at ``/login`` with a token and gets a session cookie that stands for it (ui_login.py); a
browser without either gets the login page instead of a JSON 401 (docs/ui.md).
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, MutableMapping
from typing import TYPE_CHECKING

from promptops.serve import jsonrpc
from promptops.serve.transports.http.base import (
    JSON_CT,
    NO_STORE,
    WHO,
    Encode,
    HttpError,
    Note,
    Receive,
    Scope,
    SendAsgi,
    headers,
    read_body,
    refuse,
    respond,
)

if TYPE_CHECKING:
    from promptops.serve.transports.http.guard import AuthGate
    from promptops.serve.ui_login import Sessions as UiSessions

Asgi = Callable[[Scope, Receive, SendAsgi], Awaitable[None]]


class WebUi:
    """The UI's ASGI app behind the gate, with the browser login routes beside it."""

    def __init__(self, ui: Asgi, gate: AuthGate, encode: Encode) -> None:
        self.ui, self.gate, self.encode = ui, gate, encode
        self._logins: UiSessions | None = None  # browser logins (ui_login.py), made on use

    async def __call__(self, scope: Scope, receive: Receive, send: SendAsgi, note: Note) -> int:
        hdrs = headers(scope)
        path = scope["path"]
        authenticated = self.gate.auth is not None
        if authenticated and path in ("/login", "/logout"):
            return await self._login(scope, receive, send, hdrs, note)
        if authenticated and "authorization" not in hdrs:
            # a browser's session cookie (ui_login.py) stands for the token it logged in
            # with, authenticated again below as a header would be
            from promptops.serve import ui_login

            sid = ui_login.session_id(hdrs.get("cookie"))
            token = self._sessions().token(sid) if sid else None
            if token is not None:
                hdrs["authorization"] = f"Bearer {token}"
                scope = {**scope, "promptops.signed_in": True}
            elif path in ("/static/ui.css", "/static/ui.js") and scope["method"] in (
                    "GET", "HEAD"):
                # the wheel's own assets, public anyway: the login page needs its style
                with contextlib.suppress(HttpError):
                    self.gate.guard.check(hdrs)
                    await self.ui({**scope, "promptops.see": ()}, receive, send)
                    return 200
        try:
            principal = await self.gate.admit(hdrs)
        except HttpError as exc:
            if exc.status == 401 and authenticated and "text/html" in hdrs.get(
                    "accept", ""):  # a browser: the way in, not a JSON error
                from promptops.serve import ui_login

                return await respond(send, 401, ui_login.page(), [
                    (b"content-type", b"text/html; charset=utf-8"), NO_STORE,
                    (b"content-security-policy", ui_login.CSP.encode()), *exc.headers])
            return await refuse(send, exc, self.encode)
        note[WHO] = principal.name
        status = 500

        async def sent(message: MutableMapping[str, object]) -> None:
            nonlocal status
            code = message.get("status")
            if message["type"] == "http.response.start" and isinstance(code, int):
                status = code
            await send(message)

        await self.ui({**scope, "promptops.see": tuple(principal.see)}, receive, sent)
        return status

    def _sessions(self) -> UiSessions:
        found = self._logins
        if found is None:
            from promptops.serve.ui_login import Sessions as UiSessionStore

            found = self._logins = UiSessionStore()
        return found

    async def _login(self, scope: Scope, receive: Receive, send: SendAsgi,
                     hdrs: dict[str, str], note: Note) -> int:
        """``GET /login``: the form; ``POST /login``: a token for a session cookie;
        ``POST /logout``: forget it (docs/ui.md). A POST must come from this origin."""
        from promptops.serve import ui_login

        html = [(b"content-type", b"text/html; charset=utf-8"), NO_STORE,
                (b"content-security-policy", ui_login.CSP.encode()),
                (b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"no-referrer")]
        refused = self.gate.guard.refusal(hdrs)
        if refused is not None:
            return await respond(send, refused.status, self.encode(refused.body),
                                 [JSON_CT, NO_STORE])
        secure = scope.get("scheme") == "https"
        verb = scope["method"]
        if scope["path"] == "/login" and verb in ("GET", "HEAD"):
            return await respond(send, 200, ui_login.page(), html)
        if verb != "POST":
            return await respond(send, 405, b'{"error":"method not allowed"}',
                                 [JSON_CT, NO_STORE, (b"allow", b"GET, POST")])
        if not ui_login.same_origin(hdrs, scope.get("scheme", "http")):
            return await respond(send, 403, b'{"error":"Forbidden: cross-origin form"}',
                                 [JSON_CT, NO_STORE])
        body = await read_body(receive, ui_login.MAX_FORM)
        if body is None:
            return await respond(send, 413, b'{"error":"form too large"}', [JSON_CT, NO_STORE])
        sid = ui_login.session_id(hdrs.get("cookie"))
        if scope["path"] == "/logout":
            if sid:
                self._sessions().end(sid)
            gone = ui_login.clear_cookie(secure=secure)
            return await respond(send, 303, b"", [*html, (b"location", b"/login"),
                                                  (b"set-cookie", gone)])
        token = ui_login.form_token(body)
        try:
            if token is None:
                raise HttpError(401, jsonrpc.INVALID_REQUEST, "no token given")
            principal = await self.gate.admit({**hdrs, "authorization": f"Bearer {token}"})
        except HttpError:
            return await respond(send, 401, ui_login.page("That token is not accepted."), html)
        note[WHO] = principal.name
        if sid:
            self._sessions().end(sid)  # a new login: a new id (no session fixation)
        new = self._sessions().start(token)
        cookie = ui_login.set_cookie(new, secure=secure)
        return await respond(send, 303, b"", [*html, (b"location", b"/"),
                                              (b"set-cookie", cookie)])
