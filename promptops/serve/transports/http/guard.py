"""The two gates in front of every route: the Origin/Host guard and the auth gate.

:class:`HostGuard` is the DNS-rebinding check (starlette's ``TrustedHostMiddleware``
shape, with the Origin check beside it): ``Origin`` outside the allow-list is 403 on every
bind, and on a loopback bind so is a ``Host`` that is not loopback (or, with
``--allow-host``, one not listed). It is the one home of that rule: the web UI's own
server (``promptops ui``) uses it too. :class:`Guarded` wraps a route in it.

:class:`AuthGate` admits a caller: the guard first, then the credential (static tokens or
OAuth JWTs), giving the :class:`~promptops.serve.auth.Principal` or a 401/403 with the
``WWW-Authenticate`` challenge (starlette's ``AuthenticationMiddleware`` shape). JWT
validation may fetch keys, so it runs on a thread; a static token look-up is a dict read
and runs inline: the gate decides which by the verifier's type (``isinstance``).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import TYPE_CHECKING

from promptops.serve import jsonrpc
from promptops.serve.auth import ANONYMOUS, AuthError, JwtTokens, Principal, www_authenticate
from promptops.serve.transports.http.base import (
    LOOPBACK_HOSTS,
    Encode,
    HttpError,
    Note,
    Receive,
    Scope,
    SendAsgi,
    headers,
    hostname,
    refuse,
)

if TYPE_CHECKING:
    from promptops.serve.auth import StaticTokens

# A route: ASGI's callable with the request's access-log note, returning the status it sent
Route = Callable[[Scope, Receive, SendAsgi, Note], Awaitable[int]]
PRINCIPAL_KEY = "promptops.principal"  # where Admitted puts the caller (starlette: "user")


class HostGuard:
    """Origin (every bind) and Host (loopback binds, or the allow-list) checks."""

    def __init__(self, *, allow_origins: Iterable[str] = (), allow_hosts: Iterable[str] = (),
                 loopback: bool = True) -> None:
        self.allow_origins = frozenset(o.rstrip("/") for o in allow_origins)
        self.allow_hosts = frozenset(h.lower() for h in allow_hosts)
        self.loopback = loopback
        self._hosts_ok: set[str] = set()  # Host values check passed (at most 64)

    def check(self, headers: Mapping[str, str]) -> None:
        """Nothing, or HttpError 403 naming what is not allowed."""
        origin = headers.get("origin")
        if origin is not None and origin != "null" and not self.origin_ok(origin):
            raise HttpError(403, jsonrpc.INVALID_REQUEST, "Forbidden: Origin not allowed")
        raw = headers.get("host", "")
        if raw in self._hosts_ok:  # a Host this check let through before (few distinct ones)
            return
        if not self.host_ok(raw.lower()):
            raise HttpError(403, jsonrpc.INVALID_REQUEST, "Forbidden: Host not allowed")
        if len(self._hosts_ok) < 64:
            self._hosts_ok.add(raw)

    def refusal(self, headers: Mapping[str, str]) -> HttpError | None:
        try:
            self.check(headers)
        except HttpError as exc:
            return exc
        return None

    def host_ok(self, host: str) -> bool:
        """``host``: a lower-case ``Host`` value; an absent one passes (HTTP/1.0)."""
        if self.allow_hosts:
            return host in self.allow_hosts or host.rsplit(":", 1)[0] in self.allow_hosts
        return not (self.loopback and host and hostname(host) not in LOOPBACK_HOSTS)

    def origin_ok(self, origin: str) -> bool:
        origin = origin.rstrip("/")
        if origin in self.allow_origins or "*" in self.allow_origins:
            return True
        if self.loopback:
            return hostname(origin.split("://", 1)[-1]) in LOOPBACK_HOSTS
        return False


class Guarded:
    """A route behind the :class:`HostGuard`: refused with 403 before it runs."""

    def __init__(self, route: Route, guard: HostGuard, encode: Encode) -> None:
        self.route, self.guard, self.encode = route, guard, encode

    async def __call__(self, scope: Scope, receive: Receive, send: SendAsgi, note: Note) -> int:
        refused = self.guard.refusal(headers(scope))
        if refused is not None:
            return await refuse(send, refused, self.encode)
        return await self.route(scope, receive, send, note)


class Admitted:
    """A route behind the :class:`AuthGate`: the caller in ``scope[PRINCIPAL_KEY]``; the
    gate's refusal, and any the route raises, answered as a JSON-RPC error."""

    def __init__(self, route: Route, gate: AuthGate, encode: Encode) -> None:
        self.route, self.gate, self.encode = route, gate, encode

    async def __call__(self, scope: Scope, receive: Receive, send: SendAsgi, note: Note) -> int:
        try:
            scope[PRINCIPAL_KEY] = await self.gate.admit(headers(scope))
            return await self.route(scope, receive, send, note)
        except HttpError as exc:
            return await refuse(send, exc, self.encode)


class AuthGate:
    """Who is calling, once the guard lets them through (``auth`` None: anyone)."""

    def __init__(self, guard: HostGuard, auth: StaticTokens | JwtTokens | None, *,
                 prm_url: str, required_scopes: tuple[str, ...],
                 log: Callable[[str], None]) -> None:
        self.guard, self.auth, self.prm_url = guard, auth, prm_url
        self.required_scopes, self._log = required_scopes, log
        self.threaded = isinstance(auth, JwtTokens)  # may fetch keys: off the event loop

    async def admit(self, headers: Mapping[str, str]) -> Principal:
        """The caller: 403, or 401/403 with WWW-Authenticate, as an HttpError."""
        self.guard.check(headers)
        if self.auth is None:
            return ANONYMOUS
        header = headers.get("authorization")
        try:
            if self.threaded:
                return await asyncio.to_thread(self.auth.authenticate, header)
            return self.auth.authenticate(header)
        except AuthError as exc:
            if exc.detail:  # the library's reason may quote the token: escaped, bounded
                self._log(f"token refused: {json.dumps(exc.detail[:300])}")
            challenge = www_authenticate(exc, self.prm_url, self.required_scopes)
            raise HttpError(exc.status, jsonrpc.INVALID_REQUEST, exc.description,
                            headers=[(b"www-authenticate", challenge.encode())]) from None
