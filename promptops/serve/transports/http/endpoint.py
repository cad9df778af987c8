"""The MCP endpoint (``/mcp``): admit, read one body, decide the era, hand it over.

POST is read here once for both eras - media type and ``Accept`` checked (415/406), the
body read in chunks up to ``max_body`` (413), parsed by the app's codec (-32700 with HTTP
400) - and then goes to the era :func:`~promptops.serve.revisions.request_era` names:
the :class:`~promptops.serve.transports.http.stateless.StatelessExchange` or the
:class:`~promptops.serve.transports.http.sessions.SessionEra`, which also owns GET (the
session's stream) and DELETE.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from promptops.serve import jsonrpc
from promptops.serve.auth import ANONYMOUS
from promptops.serve.methods import METHODS
from promptops.serve.revisions import STATELESS_REVISIONS
from promptops.serve.transports.http.base import (
    RPC,
    WHO,
    HeaderReader,
    HttpError,
    Message,
    Note,
    Receive,
    Scope,
    SendAsgi,
    read_body,
    refuse,
)
from promptops.serve.transports.http.stateless import is_stateless
from promptops.serve.usage import PRINCIPAL, TRACE_HEADER
from promptops.serve.wire import MessageError

if TYPE_CHECKING:
    from promptops.serve.auth import Principal
    from promptops.serve.codec import Codec
    from promptops.serve.transports.http.guard import AuthGate
    from promptops.serve.transports.http.sessions import SessionEra
    from promptops.serve.transports.http.stateless import StatelessExchange
    from promptops.serve.usage import Usage

# The JSON-RPC methods a request may name in metrics and the access log; any other is
# "other" (a caller-chosen string must never become a label value: defect 8, issue 23).
KNOWN_METHODS = frozenset((*METHODS, "notifications/initialized", "notifications/cancelled",
                           "notifications/roots/list_changed", "http+sse"))
MAX_PASSED = 64  # header-value sets remembered as passing the guard and check_media


class McpEndpoint:
    """POST, GET and DELETE of the endpoint path, for both eras."""

    def __init__(self, gate: AuthGate, codec: Codec, sessions: SessionEra,
                 stateless: StatelessExchange, max_body: int) -> None:
        self.gate, self.codec, self.max_body = gate, codec, max_body
        self.sessions, self.stateless = sessions, stateless
        self._usage: Usage | None = None
        self._traced = False  # usage with tracing: each request's trace headers are kept
        self.headers = HeaderReader()  # every request's headers, decoded once per value
        self._known = self.headers.known  # its usual case, without its call
        # (Origin, Host, Content-Type, Accept) values for which the guard and check_media
        # both passed (their answers are functions of these four and of the app's fixed
        # config; without auth only): at most MAX_PASSED, as the guard's hosts
        self._passed: set[tuple[str | None, ...] | None] = set()

    @property
    def usage(self) -> Usage | None:
        """The principal and trace context go to its counters; given after construction."""
        return self._usage

    @usage.setter
    def usage(self, usage: Usage | None) -> None:
        self._usage = usage
        self._traced = usage is not None and usage.tracing is not None

    async def __call__(self, scope: Scope, receive: Receive, send: SendAsgi, note: Note) -> int:
        """Admit, then POST, GET or DELETE. POST is read here once for both eras - media
        type and ``Accept`` checked (415/406), the body read up to ``max_body`` (413),
        parsed (-32700 with 400), its method noted for metrics - and handed to its era: in
        this coroutine, not one of its own (an awaited coroutine a request fewer, issue
        26). Without auth, a POST whose four header values passed the guard and the media
        checks before is not checked again (two calls fewer)."""
        try:  # HeaderReader's usual case (every header seen before) without its call
            hdrs = dict(map(self._known, scope["headers"]))
        except (KeyError, TypeError):
            hdrs = self.headers(scope)
        try:
            try:  # (subscripts: cheaper than get(); without one of the three, no memo)
                seen = (hdrs.get("origin"), hdrs["host"], hdrs["content-type"], hdrs["accept"])
            except KeyError:
                seen = None
            if seen in self._passed and scope["method"] == "POST":  # (filled without auth)
                principal = ANONYMOUS
            else:
                principal = await self._admit(hdrs, note)
                if scope["method"] != "POST":
                    return await self._not_post(scope, receive, send, hdrs, principal)
                check_media(hdrs)
                if seen is not None and self.gate.auth is None and \
                        len(self._passed) < MAX_PASSED:
                    self._passed.add(seen)
            if self._traced:
                TRACE_HEADER.set((hdrs.get("traceparent"), hdrs.get("tracestate")))
            first = await receive()
            body = first.get("body", b"")
            if type(body) is not bytes or first.get("more_body") or \
                    len(body) > self.max_body or first["type"] != "http.request":
                body = await self._body(receive, first)  # chunked, too long, or gone
            try:  # jsonrpc.parse's work without its call (issue 26: ~1,000 instructions)
                msg = self.codec.parse(body)
            except MessageError as exc:
                err = jsonrpc.parse_error(exc)
                raise HttpError(400, err.code, err.message) from None
            # the usual request's method, id and params, read once for either era (their
            # Server.answer takes them; anything else the core reads as before)
            usual = jsonrpc.usual(msg)
            method: object
            params: object
            # a label value and an access-log field: one of the names we answer, or "other"
            if usual is not None:  # (its method is a str: no isinstance, no tuple)
                method = usual[0]
                params = usual[2]
                note[RPC] = method if method in KNOWN_METHODS else "other"
            else:
                method, params = _named(msg)
                note[RPC] = None if not isinstance(method, str) else \
                    method if method in KNOWN_METHODS else "other"
            version = hdrs.get("mcp-protocol-version")
            # request_era's first rule inline (a stateless revision named in the header),
            # and its answer for the usual session-era request without its call: params
            # with no `_meta` (so no envelope) in a session the request joins (~1,500
            # instructions)
            if version in STATELESS_REVISIONS or ((
                    type(params) is not dict or "_meta" in params or "mcp-session-id" not in
                    hdrs) and is_stateless(msg, version, hdrs)):
                return await self.stateless.post(scope, receive, send, hdrs, principal, msg,
                                                 version, usual)
            return await self.sessions.post(scope, send, hdrs, principal, msg, version, usual)
        except HttpError as exc:
            return await refuse(send, exc, self.codec.encode)

    async def _admit(self, hdrs: dict[str, str], note: Note) -> Principal:
        """The caller, by the guard (and the credential with auth): 403 or 401 raised."""
        if self.gate.auth is None:  # the guard alone: no coroutine to await
            self.gate.guard.check(hdrs)
            return ANONYMOUS
        principal = await self.gate.admit(hdrs)
        note[WHO] = principal.name
        if self._usage is not None:
            PRINCIPAL.set(principal.name)
        return principal

    async def _body(self, receive: Receive, first: Message) -> bytes:
        """The body of a POST whose first message is not one ``bytes`` body within the
        bound (chunked, too long, or gone), read up to ``max_body``; else HttpError 413."""
        body = await read_body(receive, self.max_body, first)
        if body is None:
            raise HttpError(413, jsonrpc.INVALID_REQUEST,
                            f"Request body over {self.max_body} bytes")
        return body

    async def _not_post(self, scope: Scope, receive: Receive, send: SendAsgi,
                        hdrs: dict[str, str], principal: Principal) -> int:
        if self._traced:
            TRACE_HEADER.set((hdrs.get("traceparent"), hdrs.get("tracestate")))
        verb = scope["method"]
        if verb == "GET":
            return await self.sessions.get(scope, receive, send, hdrs, principal)
        if verb == "DELETE":
            return await self.sessions.delete(send, hdrs, principal)
        raise HttpError(405, jsonrpc.INVALID_REQUEST, "Method Not Allowed",
                        headers=[(b"allow", b"GET, POST, DELETE")])


def _named(msg: object) -> tuple[object, object]:
    """The method and params a message that is not the usual request names, if any."""
    if isinstance(msg, dict):
        return msg.get("method"), msg.get("params")
    return None, None


def check_media(hdrs: dict[str, str]) -> None:
    """A POST's media type and ``Accept``: 415 or 406 unless JSON is what comes and goes."""
    ctype = hdrs.get("content-type", "")
    if ctype != "application/json" and \
            ctype.split(";", 1)[0].strip().lower() != "application/json":
        raise HttpError(415, jsonrpc.INVALID_REQUEST,
                        "Unsupported Media Type: send Content-Type: application/json")
    accept = hdrs.get("accept", "")
    if accept and "application/json" not in accept and "*/*" not in accept and \
            "application/*" not in accept:
        raise HttpError(406, jsonrpc.INVALID_REQUEST,
                        "Not Acceptable: Accept must include application/json")
