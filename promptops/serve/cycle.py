"""The usual reply written on uvicorn's request-response cycle as its ``send`` writes it.

A reply of the MCP endpoint is two ASGI messages, ``http.response.start`` and a whole
``http.response.body``, each awaited through uvicorn's ``RequestResponseCycle.send``: a
coroutine per message, and for the start two regular expressions per header
(``HEADER_RE`` on the name, ``HEADER_VALUE_RE`` on the value), a lower-cased name and a
four-item list per header. For the four headers of a ``prompts/get`` reply (``date``,
``content-type``, ``cache-control``, ``content-length``) that was ~9,400 instructions of
the regular expressions alone and ~250 mispredicted indirect branches of the event loop's
~4,500 a request (issue 26). A server sends the same few header pairs again and again,
so :class:`Replier` remembers the line (``name.lower() + b": " + value + b"\\r\\n"``) of
every pair that passed uvicorn's checks and has no side effect on the response (any name
but ``content-length``, ``transfer-encoding`` and ``connection``), writes a
``content-length`` of ASCII digits as uvicorn writes it, and does what the two sends do,
in their order, on the cycle itself: the same bytes in the same ``transport.write`` calls,
the same state, ``message_event`` set and ``on_response`` called.

Only for uvicorn's own cycle (``send`` is its bound ``RequestResponseCycle.send``, from
uvicorn 0.53 on: earlier versions write ``connection: close`` from the request's header)
and only for the usual case: not started, nothing paused or gone, no access log, a status
in uvicorn's table, every header pair remembered or learnt, a ``content-length`` equal to
the body's, not a ``HEAD``. Anything else writes nothing and the caller awaits the two
messages as ever, so uvicorn's own send answers (and raises) for it.
tests/serve/transports/http/test_reply_cycle.py holds both to the same writes, state and
errors over the usual replies and every case that must not take this path.
"""

from __future__ import annotations

from types import MethodType
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

Lines = dict[tuple[bytes, bytes], bytes]  # remembered header lines
MAX_LINES = 64  # a full memo is emptied and learnt again (each session's id is a pair)
_SIDE_EFFECTS = (b"content-length", b"transfer-encoding", b"connection")


def _version(text: str) -> tuple[int, ...]:
    parts = []
    for part in text.split(".")[:2]:
        digits = "".join(c for c in part if c.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


USABLE = uvicorn is not None and _version(uvicorn.__version__) >= (0, 53)
_SEND = RequestResponseCycle.send if USABLE else None
NOTHING, HEAD, WHOLE = 0, 1, 2  # what Replier.now wrote (the caller sends the rest)


def learn(lines: Lines, pair: object) -> bytes | None:
    """The header line of ``pair`` as uvicorn writes it, remembered in ``lines``, when
    uvicorn's checks pass and the name has no side effect on the response; else None
    (uvicorn's send then answers, raising what it raises)."""
    if type(pair) is not tuple or len(pair) != 2:
        return None
    name, value = pair
    if type(name) is not bytes or type(value) is not bytes or HEADER_RE.search(name) \
            or HEADER_VALUE_RE.search(value):
        return None
    lower = name.lower()
    if lower in _SIDE_EFFECTS:
        return None
    line = b"%s: %s\r\n" % (lower, value)
    if len(lines) >= MAX_LINES:
        lines.clear()
    lines[pair] = line
    return line


def head(lines: Lines, cycle: RequestResponseCycle, status: int,
         headers: list[tuple[bytes, bytes]], length: int) -> bytes | None:
    """The response head uvicorn's send writes for a start of ``status`` and ``headers``
    on ``cycle`` when their one ``content-length`` is ``length``; None for anything else."""
    first = STATUS_LINE.get(status) if type(status) is int else None
    if first is None:
        return None
    content = [first]
    told = -1
    try:
        for pair in cycle.default_headers + headers:
            line = lines.get(pair)
            if line is None:
                if type(pair) is tuple and len(pair) == 2 and told < 0 and \
                        pair[0] == b"content-length" and type(pair[1]) is bytes and \
                        pair[1].isdigit():
                    told = int(pair[1])
                    content += (b"content-length: ", pair[1], b"\r\n")
                    continue
                line = learn(lines, pair)
                if line is None:
                    return None
            content.append(line)
    except TypeError:  # an unhashable pair: uvicorn's to refuse
        return None
    if told != length:
        return None
    if not cycle.keep_alive:
        content.append(b"connection: close\r\n")
    content.append(b"\r\n")
    return b"".join(content)


class Replier:
    """The usual reply on uvicorn's cycle (the module docstring), with its remembered
    header lines (one per app: a server's few pairs)."""

    __slots__ = ("lines",)

    def __init__(self) -> None:
        self.lines: Lines = {}

    def now(self, send: SendAsgi, status: int, headers: list[tuple[bytes, bytes]],
            body: bytes) -> int:
        """Write ``status``, ``headers`` and the whole ``body`` as uvicorn's send of
        ``http.response.start`` and ``http.response.body`` would: :data:`WHOLE` when all
        of it went, :data:`HEAD` when the start went and the transport then asked to
        pause (the caller sends the body message: uvicorn's send waits for the drain),
        :data:`NOTHING` when this is not the usual case (the caller sends both)."""
        if not USABLE or type(send) is not MethodType or send.__func__ is not _SEND:
            return NOTHING
        cycle = send.__self__
        if type(cycle) is not RequestResponseCycle:
            return NOTHING
        if cycle.response_started or \
                cycle.disconnected or cycle.flow.write_paused or cycle.access_log or \
                type(body) is not bytes or cycle.scope["method"] == "HEAD":
            return NOTHING
        start = head(self.lines, cycle, status, headers, len(body))
        if start is None:
            return NOTHING
        cycle.response_started = True
        cycle.waiting_for_100_continue = False
        cycle.chunked_encoding = False
        cycle.expected_content_length = len(body)
        transport = cycle.transport
        transport.write(start)
        if cycle.flow.write_paused:  # (the write filled the buffer: uvicorn's send waits)
            return HEAD
        cycle.expected_content_length = 0
        transport.write(body)
        cycle.response_complete = True
        cycle.message_event.set()
        if not cycle.keep_alive:
            transport.close()
        cycle.on_response()
        return WHOLE
