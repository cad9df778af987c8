"""Bounds on what a connection may cost before any request reaches the app.

uvicorn bounds the idle time between requests (``timeout_keep_alive``) but nothing
before the app sees a request: a request head may grow without end (httptools keeps a
header being received and re-copies it for every read, so one 64 MB header both grows
memory and stalls the event loop for everyone), a connection may send its head or its
body one byte a minute for ever, and the number of connections is not capped
(``limit_concurrency`` counts only after a head is parsed, and answers with a task).
None of that can be seen from ASGI, so it is bounded here, in the protocol: a subclass
of uvicorn's httptools protocol that ``promptops serve --http`` runs with (and that
``uvicorn --http promptops.serve.limits:BoundedHttpTools`` names for an ASGI deployment).

* **Head bytes** (:attr:`BoundedHttpTools.max_header_bytes`, 64 KiB): the bytes of a
  request line plus headers. The parser is never fed more than that while a head is
  open; past it the answer is ``431`` and the connection ends (what arrives meanwhile is
  read and dropped for up to a second or a megabyte, so a client that writes before it
  reads sees the 431 rather than a reset, and a flood costs little).
* **Head time** (``header_timeout_s``, 10 s): from the connection (or the first byte of
  a later request on it) to the end of the head. A connection that sent nothing is
  closed; one that sent part of a head gets ``408``.
* **Body time** (``body_timeout_s``, 30 s): from the end of the head to the end of the
  body. Past it: ``408`` if the app has not answered yet, the app's ``receive`` sees a
  disconnect, and the connection ends. A stream's response (SSE) is not bounded: only
  the time to *send* a request is.
* **Connections** (``max_connections``, 1000): one more gets a ``503`` at accept time.

Why httptools only: it is the parser the ``http`` extra installs and uvicorn picks; if
it is missing, :func:`protocol` falls back to uvicorn's h11 with
``h11_max_incomplete_event_size`` set to the same head bound (h11's own limit), without
the time bounds (docs/http.md says so).
"""

from __future__ import annotations

import asyncio

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

MAX_HEADER_BYTES = 64 * 1024
HEADER_TIMEOUT_S = 10.0
BODY_TIMEOUT_S = 30.0
MAX_CONNECTIONS = 1000
LINGER_S = 1.0  # how long a refused connection's further input is read and dropped ...
LINGER_BYTES = 1 << 20  # ... and how much of it (then the close may reach it as a reset)

_REASONS = {408: b"Request Timeout", 431: b"Request Header Fields Too Large",
            503: b"Service Unavailable"}


def _refusal(status: int, why: str) -> bytes:
    body = b'{"error":"%s"}' % why.encode()
    return (b"HTTP/1.1 %d %s\r\ncontent-type: application/json\r\ncontent-length: %d\r\n"
            b"connection: close\r\n\r\n%s" % (status, _REASONS[status], len(body), body))


class BoundedHttpTools(HttpToolsProtocol):
    """uvicorn's httptools protocol with head-size, head-time, body-time and connection
    bounds (the module docstring); subclass it to change them (see :func:`protocol`)."""

    max_header_bytes = MAX_HEADER_BYTES
    header_timeout_s = HEADER_TIMEOUT_S
    body_timeout_s = BODY_TIMEOUT_S
    max_connections = MAX_CONNECTIONS

    # ---- the connection --------------------------------------------------------------
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._in_head = True  # between requests or inside a head: bytes count
        self._head_bytes = 0
        self._deadline: float | None = None  # of the head or body now being received
        self._timer: asyncio.TimerHandle | None = None  # at or before the deadline
        self._timer_at = 0.0  # when the timer fires (the loop's clock)
        self._refused = False
        self._dropped = 0
        self._idle_at = 0.0  # the keep-alive deadline, while KEPT_ALIVE stands for its timer
        super().connection_made(transport)
        if len(self.connections) > self.max_connections:
            self._refuse(503, "too many connections")
            return
        self._arm(self.header_timeout_s)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        size = self._head_bytes + len(data)
        if size <= self.max_header_bytes and self._in_head and data and not self._refused:
            self._head_bytes = size  # the usual read: a whole head within its room, no copy
            _received(self, data)
            return
        if self._refused:  # lingering: read and dropped, up to a bound
            self._dropped += len(data)
            if self._dropped > LINGER_BYTES:
                self.transport.close()
            return
        while data:
            if not self._in_head:  # a body: uvicorn's own flow control bounds it
                _received(self, data)
                return
            room = self.max_header_bytes - self._head_bytes
            if room <= 0:
                self._refuse(431, "request header fields too large")
                return
            if len(data) <= room:  # the usual case: the whole read fits, no copy
                self._head_bytes += len(data)
                _received(self, data)
                return
            part, data = data[:room], data[room:]
            self._head_bytes += len(part)
            _received(self, part)  # the head may end in it; the rest is then body
            if self._refused or self.transport.is_closing():
                return

    # ---- parser callbacks ------------------------------------------------------------
    # Called for every request: the base class's methods by name rather than through
    # super(), and _arm/_disarm inline where they are one line (issue 26: each Python call
    # here is ~1,000 instructions of a request that costs ~400,000 in all).
    # _arm inline too: the timer is usually set before the new deadline, and then setting
    # the deadline is all there is to do (_move otherwise).
    def on_message_begin(self) -> None:
        _begin(self)
        if self._deadline is None:  # a later (or pipelined) request's head has begun
            deadline = self._deadline = self.loop.time() + self.header_timeout_s
            if self._timer is None or self._timer_at > deadline:
                self._move(deadline)

    def on_headers_complete(self) -> None:
        self._in_head = False
        # the head's deadline replaced by the body's (cleared by on_message_complete)
        deadline = self._deadline = self.loop.time() + self.body_timeout_s
        if self._timer is None or self._timer_at > deadline:
            self._move(deadline)
        _headers_complete(self)

    def on_message_complete(self) -> None:
        self._deadline = None  # the body's (_disarm)
        self._in_head, self._head_bytes = True, 0  # what follows is the next request's head
        _message_complete(self)

    # ---- the reply ---------------------------------------------------------------------
    def on_response_complete(self) -> None:
        """uvicorn's, but its keep-alive timeout kept by the connection's one timer.

        uvicorn creates a loop timer after every response (``call_later``) and cancels it
        at the next request's first bytes (~3,500 instructions of every request, issue
        26); here the deadline is noted and the connection's timer (below) moved only when
        it would fire after it. uvicorn's own cancel (``_unset_keepalive_if_required``, at
        the next bytes) cancels :data:`KEPT_ALIVE`, which is forgetting the deadline; at
        the deadline the connection is closed by uvicorn's own handler. A pipelined request
        waiting, or a closing transport, is uvicorn's case as ever."""
        if self.pipeline or self.transport.is_closing():
            _response_complete(self)
            return
        self.server_state.total_requests += 1
        if self.timeout_keep_alive_task is not None:  # (the two calls' own tests first)
            self._unset_keepalive_if_required()
        if self.flow.read_paused:
            self.flow.resume_reading()
        idle = self._idle_at = self.loop.time() + self.timeout_keep_alive
        self.timeout_keep_alive_task = KEPT_ALIVE  # type: ignore[assignment]
        if self._timer is None or self._timer_at > idle:
            self._move(idle)

    # ---- timers and refusals ---------------------------------------------------------
    # One deadline per connection, and one loop timer that is moved lazily: a request on a
    # kept-alive connection sets the head's deadline, then the body's, then clears it, and
    # creating and cancelling a loop timer for each of those was the protocol's largest
    # cost per request. The timer is re-armed only when it fires before the deadline now
    # set (then at that deadline), or when a new deadline comes before it; a deadline is
    # therefore enforced exactly when a timer of its own would have fired.
    def _arm(self, seconds: float) -> None:
        deadline = self._deadline = self.loop.time() + seconds
        if self._timer is None or self._timer_at > deadline:
            self._move(deadline)

    def _move(self, deadline: float) -> None:
        """The timer at ``deadline``, which comes before the one it was set for (or none)."""
        if self._timer is not None:
            self._timer.cancel()
        self._timer_at = deadline
        self._timer = self.loop.call_at(deadline, self._tick)

    def _disarm(self) -> None:
        self._deadline = None  # a timer still set lapses when it fires

    def _tick(self) -> None:
        self._timer, at = None, self._timer_at
        task: object = self.timeout_keep_alive_task
        idle = self._idle_at if task is KEPT_ALIVE else None
        if idle is not None and idle <= at:  # no request began in time: uvicorn's close
            self.timeout_keep_alive_task = None
            self.timeout_keep_alive_handler()
            return
        deadline = self._deadline
        due = deadline if idle is None or (deadline is not None and deadline < idle) else idle
        if due is None:
            return
        if due > at:  # moved since the timer was set: wait for it
            self._timer_at = due
            self._timer = self.loop.call_at(due, self._tick)
            return
        self._deadline = None
        self._expired()

    def _expired(self) -> None:
        if self.transport.is_closing() or self._refused:
            return
        cycle = self.cycle
        answering = cycle is not None and not cycle.response_complete
        if self._in_head and self._head_bytes == 0 and not answering:
            self.transport.close()  # nothing was asked: nothing to answer
            return
        if answering and cycle.response_started:
            self.transport.close()  # half an answer is out: only the close is left
        else:
            self._refuse(408, "request not received in time")
        if answering:  # the app's receive() now sees a disconnect and its sends are dropped
            cycle.disconnected = True
            cycle.message_event.set()

    def _refuse(self, status: int, why: str) -> None:
        """Answer ``status`` and end the connection; read and drop input for a moment first,
        so the client reads the answer instead of a reset."""
        self._refused = True
        self._disarm()
        transport = self.transport
        transport.write(_refusal(status, why))
        try:
            transport.write_eof()
        except (NotImplementedError, OSError, RuntimeError):
            transport.close()
            return
        self.loop.call_later(LINGER_S, transport.close)

    def eof_received(self) -> bool | None:  # type: ignore[override]
        if self._refused:
            self.transport.close()
        return None


class _KeptAlive:
    """What uvicorn's ``timeout_keep_alive_task`` holds while the connection's own timer
    keeps the keep-alive deadline (:meth:`BoundedHttpTools.on_response_complete`):
    uvicorn cancels it when the next request's bytes come, and that is all there is to do."""

    __slots__ = ()

    def cancel(self) -> None:
        """The deadline is forgotten: ``_tick`` reads it only while this stands."""


KEPT_ALIVE = _KeptAlive()

# uvicorn's own handlers, called by name on the hot path (see on_message_begin)
_received = HttpToolsProtocol.data_received
_begin = HttpToolsProtocol.on_message_begin
_headers_complete = HttpToolsProtocol.on_headers_complete
_message_complete = HttpToolsProtocol.on_message_complete
_response_complete = HttpToolsProtocol.on_response_complete


def protocol(*, max_header_bytes: int = MAX_HEADER_BYTES,
             header_timeout_s: float = HEADER_TIMEOUT_S, body_timeout_s: float = BODY_TIMEOUT_S,
             max_connections: int = MAX_CONNECTIONS) -> type[BoundedHttpTools]:
    """A :class:`BoundedHttpTools` with these bounds (uvicorn takes a protocol *class*)."""
    return type("BoundedHttpTools", (BoundedHttpTools,), {
        "max_header_bytes": max_header_bytes, "header_timeout_s": header_timeout_s,
        "body_timeout_s": body_timeout_s, "max_connections": max_connections})
