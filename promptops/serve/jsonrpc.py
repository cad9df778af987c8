"""JSON-RPC 2.0 as MCP uses it: the envelope, id rules, error replies and batches.

Everything here is about the message, not about MCP's methods, so every transport and
the protocol core share one reading of the envelope, and the error codes have one home:
no other module of ``serve`` writes a number. A transport turns bytes into a message with
:func:`parse` (bounded, through :mod:`promptops.serve.wire`) and hands it to the core
(:class:`promptops.serve.server.Server`), which reads it with :func:`read`.

A JSON-RPC batch (2025-03-26 only: the core asks :mod:`~promptops.serve.revisions`)
is bounded as a whole, because one line of it could otherwise ask for unbounded work: at
most :data:`MAX_BATCH` messages (more is one -32600 error), and once its replies reach
:data:`BATCH_REPLY_BYTES` or its requests have run for the batch's time budget (default
:data:`BATCH_SECONDS`), each further request is answered with a short -32603 error instead
of being run, so a batch line costs at most one bounded reply.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeGuard

from promptops.serve import wire
from promptops.serve.wire import LongInt

Json = dict[str, Any]  # a JSON object: params, results, replies (the one such alias in serve)
RequestId = str | int | LongInt
Outbound = Json | list[Json]  # one message to a client: a reply, a notification or a batch reply
Send = Callable[[Outbound], None]

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
INTERNAL_ERROR = -32603
UNSUPPORTED_VERSION, RESOURCE_NOT_FOUND = -32022, -32002  # MCP's own codes
# 2026-07-28's own: a Streamable HTTP header that is missing or disagrees with the body
# (HeaderMismatchError), and a request needing a capability the client did not declare
# (MissingRequiredClientCapabilityError); HTTP answers both with 400
HEADER_MISMATCH, MISSING_CAPABILITY = -32020, -32021
MAX_ERROR_TEXT = 1000  # characters of an error message or data string: quoted values are cut
MAX_BATCH = 100  # messages in one batch
BATCH_REPLY_BYTES = 16 * 1024 * 1024  # encoded replies of one batch
BATCH_SECONDS = 10.0  # run time of one batch's requests


class RpcError(Exception):
    """A request that gets an error reply; raised anywhere below dispatch."""

    def __init__(self, code: int, message: str, data: object = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


# Plain classes, not dataclasses, here and in the other modules of serve's cold path:
# a @dataclass compiles its generated methods when the module is imported (~0.3 ms each,
# and each start of `promptops serve` pays for it).


class Request:
    """A message that asks for a reply: a valid id and an object of params."""

    __slots__ = ("id", "method", "params")

    def __init__(self, method: str, id_: RequestId, params: Json) -> None:
        self.method, self.id, self.params = method, id_, params


class Notification:
    """A message without an id: never answered, not even with an error."""

    __slots__ = ("method", "params")

    def __init__(self, method: str, params: Json) -> None:
        self.method, self.params = method, params


def valid_id(id_: object) -> TypeGuard[RequestId]:
    """JSON-RPC ids are strings or integers (of any length: see wire.LongInt)."""
    return isinstance(id_, (str, LongInt)) or (isinstance(id_, int) and not isinstance(id_, bool))


def parse(data: bytes, read: Callable[[bytes], object] = wire.parse) -> object:
    """The message in ``data``; RpcError (-32700) when it is not acceptable JSON.

    ``read``: a codec's ``parse`` (promptops.serve.codec), ``wire.parse`` by default."""
    try:
        return read(data)
    except wire.MessageError as exc:
        raise parse_error(exc) from None


def parse_error(exc: wire.MessageError) -> RpcError:
    """The -32700 of :func:`parse`, for a transport that calls its codec itself."""
    return RpcError(PARSE_ERROR, f"parse error: {exc}")


def oversized(limit: int) -> RpcError:
    """The error for a message longer than the transport accepts (its rest is discarded)."""
    return RpcError(INVALID_REQUEST, f"message over {limit} bytes")


def internal_error(message: object) -> list[Json]:
    """The replies to a message whose handling hit a bug: -32603 if it can be matched."""
    mid = message.get("id") if isinstance(message, dict) else None
    return [error(mid, INTERNAL_ERROR, "internal error")] if valid_id(mid) else []


def read(msg: object) -> Request | Notification | Json | None:
    """What one message is: a request, a notification, the error reply it gets, or None.

    None is a response (we never send requests, so there is nothing to match) or a
    notification whose params are not an object (ignored, as notifications are).
    """
    if not isinstance(msg, dict):
        return error(None, INVALID_REQUEST, "not a JSON-RPC 2.0 message")
    method, id_, params = msg.get("method"), msg.get("id"), msg.get("params", {})
    if msg.get("jsonrpc") != "2.0":  # answered to its id when it has one a client can match
        return error(id_ if valid_id(id_) else None, INVALID_REQUEST,
                     'not a JSON-RPC 2.0 message: "jsonrpc" must be "2.0"')
    if not isinstance(method, str):
        if "result" in msg or "error" in msg:
            return None
        return error(id_ if valid_id(id_) else None, INVALID_REQUEST, "method missing")
    if "id" not in msg:
        return Notification(method, params) if isinstance(params, dict) else None
    # valid_id's two usual answers inline (a call is ~1,000 instructions a request)
    if type(id_) is not int and type(id_) is not str and not valid_id(id_):
        return error(None, INVALID_REQUEST, "id must be a string or an integer")
    if not isinstance(params, dict):
        return error(id_, INVALID_PARAMS, "params must be an object")
    return Request(method, id_, params)


def usual(msg: object) -> tuple[str, RequestId, Json] | None:
    """The method, id and params of the usual request, or None for anything else.

    :func:`read`'s :class:`Request` case under a stricter test (a plain dict whose
    ``"jsonrpc"`` is ``"2.0"``, a str method, an int or str id, a plain dict of params):
    whatever passes here :func:`read` makes the same request of; anything else (a
    notification, a response, a bad envelope, a long or float id, absent params) is
    read by :func:`read`, which answers it as ever. The HTTP endpoint reads a body's
    message here once for either era, without a :class:`Request` object (issue 26);
    tests/serve/test_jsonrpc_usual.py holds it to :func:`read`."""
    if type(msg) is dict:
        try:  # (subscripts: cheaper than get(); a notification or no params is a miss)
            method, rid, params = msg["method"], msg["id"], msg["params"]
            if type(params) is dict and (type(rid) is int or type(rid) is str) and \
                    type(method) is str and msg["jsonrpc"] == "2.0":
                return method, rid, params
        except KeyError:
            pass
    return None


def is_request(msg: object) -> TypeGuard[Json]:
    """Whether ``msg`` is a request that gets a reply (used to answer what a batch skips)."""
    return (isinstance(msg, dict) and msg.get("jsonrpc") == "2.0"
            and isinstance(msg.get("method"), str) and "id" in msg and valid_id(msg["id"]))


def error(id_: object, code: int, message: str, data: object = None) -> Json:
    """An error reply; without a known id the id is left out (see Server.reject).

    Messages quote what the client sent (an unknown prompt name, a URI): quoted text
    is cut so that an error reply stays small whatever the request held.
    """
    err: Json = {"code": code, "message": _clip(message)}
    if data is not None:
        if isinstance(data, dict):
            data = {k: _clip(v) if isinstance(v, str) else v for k, v in data.items()}
        err["data"] = data
    out: Json = {"jsonrpc": "2.0", "error": err}
    if id_ is not None:
        out["id"] = id_
    return out


def reply(id_: RequestId, result: Json) -> Json:
    return {"jsonrpc": "2.0", "id": id_, "result": result}


def null_id(reply: Json) -> Json:
    """``"id": null`` on an error reply that has no id (JSON-RPC 2.0's own rule).

    2025-11-25 and later schemas say leave the id out instead; revisions before require
    an id the schema cannot express as unknown, so those connections get JSON-RPC's null.
    """
    if "error" in reply and "id" not in reply:
        return {"jsonrpc": "2.0", "id": None, "error": reply["error"]}
    return reply


def batch_problem(items: list[object]) -> RpcError | None:
    """Why a batch is refused as a whole (-32600), or None."""
    if not items:
        return RpcError(INVALID_REQUEST, "empty batch")
    if len(items) > MAX_BATCH:
        return RpcError(INVALID_REQUEST, f"a batch of {len(items):,} messages is over "
                        f"the limit of {MAX_BATCH}; send fewer at a time")
    return None


def run_batch(items: list[object], answer: Callable[[object], list[Json]],
              seconds: float) -> list[Json]:
    """Each member's replies (``answer`` gives them), within the reply-size and time budget."""
    replies: list[Json] = []
    size, started, over = 2, time.monotonic(), ""
    for item in items:
        if not over and time.monotonic() - started > seconds:
            over = f"its requests ran for {seconds:g} s"
        if over and is_request(item):
            out = [error(item["id"], INTERNAL_ERROR, f"not run: the batch is over its "
                         f"budget ({over}); send the request again on its own")]
        else:
            out = answer(item)
        for one in out:
            n = len(wire.encode(one)) + 1
            if size + n > BATCH_REPLY_BYTES:
                over = over or f"its replies reached {BATCH_REPLY_BYTES:,} bytes"
                one = error(one.get("id"), INTERNAL_ERROR, f"reply dropped: the batch "
                            f"is over its budget ({over}); send the request on its own")
                n = len(wire.encode(one)) + 1
            size += n
            replies.append(one)
    return replies


def _clip(text: str) -> str:
    if len(text) <= MAX_ERROR_TEXT:
        return text
    return f"{text[:MAX_ERROR_TEXT]}... ({len(text):,} characters in all)"
