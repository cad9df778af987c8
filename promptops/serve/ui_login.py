"""A browser login for ``serve --http --ui`` with tokens (docs/ui.md, SECURITY.md).

A browser sends no bearer token by itself. ``GET /login`` is a form; ``POST /login``
takes the token once, checks it with the server's own authenticator, and answers with a
cookie holding a random session id (never the token): ``HttpOnly`` (no script reads it),
``SameSite=Strict`` (no other site's page sends it), ``Secure`` when the request came over
https, ``Path=/``. The server keeps session id -> token in memory (bounded, each session
expiring after :data:`SESSION_SECONDS`) and, on each UI request with the cookie and no
``Authorization`` header, authenticates the stored token again as a header would be: a
token narrowed or removed by a tokens-file reload takes effect on the next page.

The cookie admits the UI's pages only, never ``/mcp`` or any other endpoint, and the UI
is read-only GET: so a forged cross-site request can change nothing. The one POST, the
login itself, must come from the server's own origin (``Origin`` present and naming the
request's ``Host``), so another site cannot log a browser in under its own token.
``POST /logout`` (same Origin rule) forgets the session.
"""

from __future__ import annotations

import secrets
import time
from collections import OrderedDict
from html import escape
from urllib.parse import parse_qsl

COOKIE = "promptops_ui"
SESSION_SECONDS = 12 * 3600
MAX_SESSIONS = 10_000  # oldest dropped first: a flood of logins costs memory, bounded
MAX_FORM = 16 * 1024  # bytes of a login form's body
CSP = ("default-src 'none'; style-src 'self'; form-action 'self'; base-uri 'none'; "
       "frame-ancestors 'none'")


class Sessions:
    """Session id -> (token, expiry), oldest first."""

    def __init__(self, limit: int = MAX_SESSIONS, ttl: float = SESSION_SECONDS) -> None:
        self.limit = limit
        self.ttl = ttl
        self._by_id: OrderedDict[str, tuple[str, float]] = OrderedDict()

    def start(self, token: str) -> str:
        sid = secrets.token_urlsafe(32)
        self._by_id[sid] = (token, time.monotonic() + self.ttl)
        while len(self._by_id) > self.limit:
            self._by_id.popitem(last=False)
        return sid

    def token(self, sid: str) -> str | None:
        found = self._by_id.get(sid)
        if found is None:
            return None
        if found[1] < time.monotonic():
            del self._by_id[sid]
            return None
        return found[0]

    def end(self, sid: str) -> None:
        self._by_id.pop(sid, None)


def session_id(cookie_header: str | None) -> str | None:
    """Our cookie's value from a ``Cookie`` header."""
    if not cookie_header:
        return None
    for part in cookie_header.split(";"):
        name, sep, value = part.strip().partition("=")
        if sep and name == COOKIE and 0 < len(value) <= 128:
            return value
    return None


def same_origin(headers: dict[str, str], scheme: str) -> bool:
    """Whether a POST comes from a page of this server: ``Origin`` is required (every
    browser sends it on a form POST) and must be this scheme and ``Host``; or ``null``,
    which a browser sends from a page served with ``Referrer-Policy: no-referrer`` (the
    UI's own), when the browser's ``Sec-Fetch-Site`` (a header no page can set) says
    ``same-origin``. Any other ``Sec-Fetch-Site`` is refused."""
    origin = headers.get("origin")
    host = headers.get("host", "").lower()
    if not origin or not host:
        return False
    site = headers.get("sec-fetch-site")
    if site is not None and site != "same-origin":
        return False
    if origin == "null":
        return site == "same-origin"
    return origin.rstrip("/").lower() == f"{scheme}://{host}"


def form_token(body: bytes) -> str | None:
    """The ``token`` field of an url-encoded form body."""
    try:
        fields = parse_qsl(body.decode("utf-8"), max_num_fields=10)
    except (UnicodeDecodeError, ValueError):
        return None
    token = dict(fields).get("token", "").strip()
    return token or None


def set_cookie(sid: str, *, secure: bool) -> bytes:
    attrs = f"{COOKIE}={sid}; Path=/; HttpOnly; SameSite=Strict; Max-Age={SESSION_SECONDS}"
    return (attrs + ("; Secure" if secure else "")).encode()


def clear_cookie(*, secure: bool) -> bytes:
    return (f"{COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"
            + ("; Secure" if secure else "")).encode()


def page(error: str | None = None) -> bytes:
    """The login form (the UI's stylesheet; no script)."""
    note = (f"<p class=\"error\" role=\"alert\" id=\"login-error\">{escape(error)}</p>"
            if error else "")
    return (
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        "<meta name=\"color-scheme\" content=\"light dark\">"
        "<title>Sign in · promptops</title><link rel=\"stylesheet\" href=\"/static/ui.css\">"
        "</head><body><main id=\"main\"><h1>Sign in</h1>"
        "<p>Paste the token this server gave your team. It is sent once; the browser then "
        "keeps only a session cookie.</p>" + note +
        "<form id=\"login\" method=\"post\" action=\"/login\">"
        "<div class=\"field\"><label for=\"token\">Token</label>"
        "<input id=\"token\" name=\"token\" type=\"password\" autocomplete=\"current-password\" "
        "required></div><p><button type=\"submit\" id=\"sign-in\">Sign in</button></p>"
        "</form></main></body></html>"
    ).encode()
