"""The 2026-07-28 single exchange: one request, one reply, no session (SDK's
``_streamable_http_modern.py`` shape).

A request is stateless by the one rule of every transport,
:func:`promptops.serve.revisions.request_era` (the ``MCP-Protocol-Version`` header, the
``_meta`` envelope, ``server/discover``). Before anything is dispatched its headers must
agree with its body: the revision (``MCP-Protocol-Version``), the method (``Mcp-Method``)
and, for the three methods that name something, the name (``Mcp-Name``, plain visible
ASCII or ``=?base64?...?=``), else -32020 HeaderMismatch with HTTP 400; then the core's
:func:`~promptops.serve.session.envelope` checks the envelope itself. The request runs on
the server's shared stateless session (:meth:`Server.stateless`);
``subscriptions/listen`` is the one answered with a stream, on a session of its own.
"""

from __future__ import annotations

import base64
import binascii
from typing import TYPE_CHECKING

from promptops.serve import jsonrpc
from promptops.serve.auth import ANONYMOUS
from promptops.serve.cycle import NOTHING, WHOLE, Replier, length
from promptops.serve.revisions import (
    LATEST_STATELESS,
    META_CAPS,
    META_VERSION,
    STATELESS,
    STATELESS_REVISIONS,
    SUPPORTED,
    request_era,
)
from promptops.serve.session import envelope
from promptops.serve.transports.http.base import (
    JSON_CT,
    NO_STORE,
    NO_STORE_JSON,
    SSE_HEADERS,
    HttpError,
    Receive,
    Scope,
    SendAsgi,
    client_key,
    respond,
)

if TYPE_CHECKING:
    from promptops.serve.auth import Principal
    from promptops.serve.jsonrpc import Json, RequestId
    from promptops.serve.server import Server
    from promptops.serve.transports.http.streams import StreamRegistry
    from promptops.serve.views import Views

NAMED_PARAM = {"prompts/get": "name", "resources/read": "uri", "tools/call": "name"}
CacheHeaders = dict[tuple[bool, int, bool], list[tuple[bytes, bytes]]]


def is_stateless(msg: object, version: str | None, headers: dict[str, str]) -> bool:
    """Whether the request belongs to the stateless era (revisions.request_era decides)."""
    if isinstance(msg, dict):
        params = msg.get("params")
        era = request_era(msg.get("method"), params if isinstance(params, dict) else {},
                          named=version, joined="mcp-session-id" in headers)
    else:  # a batch: only a header can make it stateless (which then refuses it)
        era = request_era(None, {}, named=version, joined=True)
    return era is STATELESS


def decode_name(value: str) -> str | None:
    """An ``Mcp-Name`` value, decoding the ``=?base64?...?=`` form; None if invalid."""
    if value.startswith("=?base64?") and value.endswith("?="):
        try:
            return base64.b64decode(value[9:-2], validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return None
    # visible ASCII and space (0x20-0x7E) only: for ASCII text that is what isprintable()
    # accepts (a test checks all 128 code points)
    return value if value.isascii() and value.isprintable() else None


def status_for(reply: Json) -> int:
    """The HTTP status of a stateless reply (docs/http.md lists the mapping)."""
    err = reply.get("error") if isinstance(reply, dict) else None
    if err is None:
        return 200
    code = err.get("code")
    if code == jsonrpc.METHOD_NOT_FOUND:
        return 404
    if code in (jsonrpc.INVALID_PARAMS, jsonrpc.INVALID_REQUEST, jsonrpc.UNSUPPORTED_VERSION,
                jsonrpc.HEADER_MISMATCH, jsonrpc.MISSING_CAPABILITY, jsonrpc.PARSE_ERROR):
        return 400
    return 500


def cache_headers(reply: Json, *, authenticated: bool,
                  memo: CacheHeaders) -> list[tuple[bytes, bytes]]:
    """The response's headers after the status: content type and caching.

    ``memo`` (the exchange's) keeps the few distinct lists; they are never mutated.
    """
    result = reply.get("result")
    if not isinstance(result, dict) or "ttlMs" not in result:
        return NO_STORE_JSON
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


def check_headers(msg: Json, params: Json, headers: dict[str, str], version: str | None) -> None:
    """Headers that agree with the body, or HttpError 400 (-32020 / -32022)."""
    rid, method = msg.get("id"), msg.get("method")
    meta = params.get("_meta")
    body_version = meta.get(META_VERSION) if isinstance(meta, dict) else None
    if version is None:
        raise HttpError(400, jsonrpc.HEADER_MISMATCH,
                        "Header mismatch: MCP-Protocol-Version header is required", rid)
    if body_version is not None and body_version != version:
        raise HttpError(400, jsonrpc.HEADER_MISMATCH,
                        f"Header mismatch: MCP-Protocol-Version header value {version!r} "
                        f"does not match body value {str(body_version)!r}", rid)
    if version not in SUPPORTED:
        raise HttpError(400, jsonrpc.UNSUPPORTED_VERSION, "Unsupported protocol version",
                        rid, {"supported": list(SUPPORTED), "requested": version})
    hmethod = headers.get("mcp-method")
    if hmethod is None:
        raise HttpError(400, jsonrpc.HEADER_MISMATCH, "Header mismatch: Mcp-Method header is "
                        "required", rid)
    if hmethod != method:
        raise HttpError(400, jsonrpc.HEADER_MISMATCH, f"Header mismatch: Mcp-Method header "
                        f"value {hmethod!r} does not match body value {method!r}", rid)
    key = NAMED_PARAM.get(method) if isinstance(method, str) else None
    if key is not None:
        raw = headers.get("mcp-name")
        if raw is None:
            raise HttpError(400, jsonrpc.HEADER_MISMATCH,
                            "Header mismatch: Mcp-Name header is required", rid)
        # decode_name's plain form inline (a call is ~1,000 instructions); the encoded
        # form and anything else goes through it
        name = raw if raw.isascii() and raw.isprintable() and not raw.startswith(
            "=?base64?") else decode_name(raw)
        if name is None or name != params.get(key):
            raise HttpError(400, jsonrpc.HEADER_MISMATCH, f"Header mismatch: Mcp-Name header "
                            f"value {raw!r} does not match body value {params.get(key)!r}", rid)


def usual_checks(method: str, params: Json, headers: dict[str, str],
                 version: str | None) -> tuple[Json, str] | None:
    """:func:`check_headers` and the core's :func:`envelope` at once for the usual
    request: the envelope's client capabilities and revision when a stricter test than
    both passes, else None, and then both run, in their order, to raise what they raise.

    A request that passes here passes both: the header's revision is a stateless one and
    the body's equals it, ``Mcp-Method`` is the body's method, a named method's
    ``Mcp-Name`` is its plain (visible ASCII) form equal to the body's name, and the
    capabilities are an object. The two calls and their repeated look-ups of the same
    values were ~8,000 instructions of every stateless request (issue 26);
    tests/serve/transports/http/test_http_hot_path.py holds this to them."""
    if version not in STATELESS_REVISIONS:
        return None
    try:  # subscripts, not get() (~100 instructions each): a key absent is a miss
        meta = params["_meta"]
        if type(meta) is not dict or meta[META_VERSION] != version or \
                headers["mcp-method"] != method:
            return None
        caps = meta[META_CAPS]
        if type(caps) is not dict:
            return None
        key = NAMED_PARAM.get(method)
        if key is not None:
            raw = headers["mcp-name"]
            if raw != params[key] or not raw.isascii() or not raw.isprintable() or \
                    raw.startswith("=?base64?"):
                return None
    except KeyError:
        return None
    return caps, version


class StatelessExchange:
    """POST of the 2026-07-28 era: checked headers, a throwaway session, one reply."""

    def __init__(self, views: Views, streams: StreamRegistry, *, authenticated: bool,
                 replier: Replier | None = None) -> None:
        self.views, self.streams, self.authenticated = views, streams, authenticated
        self._memo: CacheHeaders = {}  # see cache_headers
        self._reply = (replier or Replier()).now  # the usual reply on uvicorn's cycle

    async def post(self, scope: Scope, receive: Receive, send: SendAsgi,
                   headers: dict[str, str], principal: Principal, msg: object,
                   version: str | None,
                   usual: tuple[str, RequestId, Json] | None = None) -> int:
        """``usual``: what :func:`~promptops.serve.jsonrpc.usual` read of ``msg``, when
        the endpoint read it (the usual request: one object with an id, a str method and
        an object of params, so the first three checks below pass); else the core reads
        it."""
        rid: object
        params: Json
        body: Json  # msg, known to be one object
        if usual is not None:  # (jsonrpc.usual read it from a dict: no test again)
            method, rid, params = usual
            body = msg  # type: ignore[assignment]
        elif not isinstance(msg, dict):
            raise HttpError(400, jsonrpc.INVALID_REQUEST,
                            f"{LATEST_STATELESS} takes one JSON-RPC message per request")
        else:
            body = msg
            rid, name = msg.get("id"), msg.get("method")
            if "id" not in msg or not isinstance(name, str):  # a notification or a response
                return await respond(send, 202, b"")
            method, params = name, msg.get("params")  # type: ignore[assignment]
            if not isinstance(params, dict):
                params = {}
        checked = usual_checks(method, params, headers, version)
        if checked is None:  # something to refuse, or an unusual form: both checks run
            check_headers(body, params, headers, version)
            try:
                checked = envelope(params)
            except jsonrpc.RpcError as exc:
                raise HttpError(400, exc.code, exc.message, rid, exc.data) from None
        # (the caller without auth sees everything: that view's server, without a call)
        server = self.views.everything if principal is ANONYMOUS else \
            self.views.server(principal.see)
        if method == "subscriptions/listen":
            client = client_key(principal, scope, authenticated=self.authenticated)
            return await self._listen(receive, send, server, client, body)
        try:  # stateless by the rule is_stateless applied, the envelope read above
            replies = server.stateless(body, checked) if usual is None else \
                server.answer(server.shared, method, usual[1], params, checked)  # its usual
        except Exception:
            _log_bug()
            replies = list(jsonrpc.internal_error(msg))
        out = replies[0] if replies else jsonrpc.error(rid, jsonrpc.INTERNAL_ERROR, "no reply")
        assert isinstance(out, dict)
        try:  # Codec.encode without its frame
            data = self.streams.dumps(out)
        except TypeError:
            data = self.streams.encode(out)
        result = out.get("result")
        if isinstance(result, dict) and "ttlMs" not in result and "error" not in out:
            status, head = 200, NO_STORE_JSON  # a get: status_for and cache_headers inline
        else:
            status = status_for(out)
            head = cache_headers(out, authenticated=self.authenticated, memo=self._memo)
        sent = self._reply(send, status, head, data)  # (cycle.py)
        if sent != WHOLE:
            if sent == NOTHING:
                await send({"type": "http.response.start", "status": status,
                            "headers": [*head, length(data)]})
            await send({"type": "http.response.body", "body": data})
        return status

    async def _listen(self, receive: Receive, send: SendAsgi, server: Server, client: str,
                      msg: Json) -> int:
        stream = self.streams.open("listen", client)
        session = server.open(stream.send)
        stream.session, stream.server, stream.final = session, server, True
        try:
            try:
                replies = server.handle(session, msg)
            except Exception:
                _log_bug()
                replies = list(jsonrpc.internal_error(msg))
            ack = replies[0] if replies else None
            if not isinstance(ack, dict) or "error" in ack or "result" in ack:
                out = ack if isinstance(ack, dict) else jsonrpc.internal_error(msg)[0]
                return await respond(send, status_for(out), self.streams.encode(out),
                                     [JSON_CT, NO_STORE])
            await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
            await send({"type": "http.response.body", "body": self.streams.frame(ack),
                        "more_body": True})
            await self.streams.pump(stream, receive, send)
            return 200
        finally:
            # Closed by its client (HTTP cancellation: nothing more is sent for it), ended
            # for a reader that fell behind, or drained (then already closed): either way
            # the session and its subscription end with the stream.
            server.close(session)
            self.streams.close(stream)


def _log_bug() -> None:
    from promptops.serve.log import log_bug

    log_bug()
