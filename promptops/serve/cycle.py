"""The usual reply written on uvicorn's request-response cycle as its ``send`` writes it.

A reply of the MCP endpoint is two ASGI messages, ``http.response.start`` and a whole
``http.response.body``, each awaited through uvicorn's ``RequestResponseCycle.send``: a
coroutine per message, and for the start two regular expressions per header
(``HEADER_RE`` on the name, ``HEADER_VALUE_RE`` on the value), a lower-cased name and a
four-item list per header. For the four headers of a ``prompts/get`` reply (``date``,
``content-type``, ``cache-control``, ``content-length``) that was ~9,400 instructions of
the regular expressions alone and ~250 mispredicted indirect branches of the event loop's
~4,500 a request, and the two sends ~21,000 instructions in all (issue 26). A server
sends the same few header lists again and again, so :class:`Replier` remembers, by the
values of the status and of every pair (uvicorn's default headers, then the reply's),
the status line and header lines (``name.lower() + b": " + value + b"\\r\\n"``) uvicorn
writes for them when every pair passed uvicorn's checks and none has a side effect on
the response (any name but ``content-length``, ``transfer-encoding`` and
``connection``); it writes the body's ``content-length`` last (as the callers put it)
from the length itself, and does what the two sends do, in their order, on the cycle
itself: the same bytes in the same ``transport.write`` calls, the same state,
``message_event`` set and ``on_response`` called.

Only for uvicorn's own cycle (``send`` is its bound ``RequestResponseCycle.send``, from
uvicorn 0.53 to 0.55, :data:`CHECKED`: earlier versions write ``connection: close`` from
the request's header, later ones are not checked yet)
and only for the usual case: not started, nothing paused or gone, no access log, a status
in uvicorn's table, every header pair one that passes, not a ``HEAD``. Anything else
writes nothing and the caller awaits the two messages as ever, so uvicorn's own send
answers (and raises) for it. tests/serve/transports/http/test_reply_cycle.py holds both
to the same writes, state and errors over the usual replies and every case that must
not take this path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

try:  # uvicorn with httptools: the server `serve --http` runs on
    import uvicorn
    from uvicorn.protocols.http.httptools_impl import (
        HEADER_RE,
        HEADER_VALUE_RE,
        STATUS_LINE,
        RequestResponseCycle,
    )
except ImportError:  # another ASGI server, or h11: every reply goes out as two messages
    uvicorn = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from promptops.serve.transports.http.base import SendAsgi

Heads = dict[tuple[object, ...], bytes]  # (status, *pairs) -> the head's first lines
MAX_HEADS = 64  # a full memo is emptied and learnt again (each session's id is a pair)
_SIDE_EFFECTS = (b"content-length", b"transfer-encoding", b"connection")


def _version(text: str) -> tuple[int, ...]:
    parts = []
    for part in text.split(".")[:2]:
        digits = "".join(c for c in part if c.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


# The versions whose ``send`` this module was checked against (write for write, by
# tests/serve/transports/http/test_reply_cycle.py): 0.53 to 0.55. A later uvicorn may
# change what its cycle does; until someone checks it and raises the bound, its own
# ``send`` answers every reply (the figure is lost there, never a byte).
CHECKED = ((0, 53), (0, 55))


def usable(version: str) -> bool:
    """Whether uvicorn ``version``'s cycle is one this module writes on."""
    return CHECKED[0] <= _version(version) <= CHECKED[1]


USABLE = uvicorn is not None and usable(uvicorn.__version__)
_SEND = RequestResponseCycle.send if USABLE else None
NOTHING, HEAD, WHOLE = 0, 1, 2  # what Replier.now wrote (the caller sends the rest)


def line(pair: object) -> bytes | None:
    """The header line of ``pair`` as uvicorn's send writes it when uvicorn's checks pass
    and the name has no side effect on the response; else None (uvicorn's send then
    answers, raising what it raises)."""
    if type(pair) is not tuple or len(pair) != 2:
        return None
    name, value = pair
    if type(name) is not bytes or type(value) is not bytes or HEADER_RE.search(name) \
            or HEADER_VALUE_RE.search(value):
        return None
    lower = name.lower()
    return None if lower in _SIDE_EFFECTS else b"%s: %s\r\n" % (lower, value)


def prefix(status: object, pairs: tuple[object, ...]) -> bytes | None:
    """The status line and header lines uvicorn's send writes for ``status`` and
    ``pairs`` (the default headers, then the message's), or None (see :func:`line`)."""
    first = STATUS_LINE.get(status) if type(status) is int else None
    if first is None:
        return None
    lines = [first]
    for pair in pairs:
        got = line(pair)
        if got is None:
            return None
        lines.append(got)
    return b"".join(lines)


def length(body: bytes) -> tuple[bytes, bytes]:
    """The ``content-length`` header :meth:`Replier.now` writes after the others."""
    return (b"content-length", b"%d" % len(body))


class Replier:
    """The usual reply on uvicorn's cycle (the module docstring), with its remembered
    heads (one per app: a server's few header lists)."""

    __slots__ = ("heads",)

    def __init__(self) -> None:
        self.heads: Heads = {}

    def now(self, send: SendAsgi, status: int, headers: list[tuple[bytes, bytes]],
            body: bytes) -> int:
        """Write ``status``, ``headers`` and :func:`length` of ``body``, then the whole
        ``body``, as uvicorn's send of ``http.response.start`` with those headers and of
        ``http.response.body`` would: :data:`WHOLE` when all of it went, :data:`HEAD` when
        the start went and the transport then asked to pause (the caller sends the body
        message: uvicorn's send waits for the drain), :data:`NOTHING` when this is not the
        usual case (the caller sends both, with ``headers + [length(body)]``)."""
        try:  # uvicorn's bound send (its __func__), or anything else
            if send.__func__ is not _SEND:  # type: ignore[attr-defined]
                return NOTHING
        except AttributeError:
            return NOTHING
        cycle = send.__self__  # type: ignore[attr-defined]
        if type(cycle) is not RequestResponseCycle or cycle.response_started or \
                cycle.disconnected or cycle.flow.write_paused or cycle.access_log or \
                type(body) is not bytes or cycle.scope["method"] == "HEAD":
            return NOTHING
        try:  # the head's first lines by the values of status and every pair
            key = (status, *cycle.default_headers, *headers)
            first = self.heads.get(key)
        except TypeError:  # an unhashable pair: uvicorn's to refuse
            return NOTHING
        if first is None:
            first = prefix(status, key[1:])
            if first is None:
                return NOTHING
            if len(self.heads) >= MAX_HEADS:
                self.heads.clear()
            self.heads[key] = first
        cycle.response_started = True
        cycle.waiting_for_100_continue = False
        cycle.chunked_encoding = False
        transport = cycle.transport
        transport.write(b"%scontent-length: %d\r\n%s\r\n" % (
            first, len(body), b"" if cycle.keep_alive else b"connection: close\r\n"))
        if cycle.flow.write_paused:  # (the write filled the buffer: uvicorn's send waits)
            cycle.expected_content_length = len(body)
            return HEAD
        transport.write(body)  # (expected_content_length: 0 before and after)
        cycle.response_complete = True
        cycle.message_event.set()
        if not cycle.keep_alive:
            transport.close()
        cycle.on_response()
        return WHOLE
