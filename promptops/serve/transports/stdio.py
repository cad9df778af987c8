"""The stdio transport: newline-delimited JSON-RPC on stdin/stdout, logs on stderr.

Three promises shape it. **Every line costs O(its length)** and at most one bounded
reply: lines are cut at :data:`MAX_LINE` while reading (the rest of a longer line is
discarded without being kept), and :mod:`promptops.serve.wire` parses each with its
nesting and value bounds. **Every reply is written whole**: stdout is written with
``os.write`` on the file descriptor in a loop that finishes short writes and waits out
``EAGAIN`` (a client may hand us a non-blocking pipe), under one lock because reload
notifications come from the git follower's thread; a reader that hung up ends the
loop quietly instead. **Pipelined requests are answered with few writes**: the replies
to the lines of one read are held and written together, before the loop waits for more
input, once :data:`HOLD_BYTES` are held, or before the next request once the oldest has
waited :data:`HOLD_SECONDS` (so a client that waits for each reply gets it at once, and
one that pipelines saves a system call and a wake-up per reply); anything another thread
sends goes out after the held replies, never before. **The exit contract holds in every
order**: stdin EOF, SIGTERM
or SIGINT - before any input, during a request, right after EOF, during shutdown - end
the process with status 0 after every open ``subscriptions/listen`` got its final
result.

For that last promise the signal handler never raises (an exception raised at a random
bytecode could cut a reply in half or be swallowed by a render's error handling). The
lines are read and answered in a worker thread while the main thread only waits on a
pipe that the worker writes to when it ends and that ``signal.set_wakeup_fd`` writes
to when a signal arrives. Whichever comes first, the main thread ends the connection:
it sends the final results (after any reply being written, which it never cuts) and
closes the output. A request still being answered when a signal arrives is abandoned
without a reply - the client is going away - so shutdown never waits for a render.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator
from types import FrameType
from typing import TYPE_CHECKING

from promptops.serve import jsonrpc, wire
from promptops.serve.log import log_bug
from promptops.signals import signal

if TYPE_CHECKING:
    from promptops.serve.codec import Codec
    from promptops.serve.jsonrpc import Json, Outbound
    from promptops.serve.session import Session
    from promptops.serve.transports import Dispatcher

MAX_LINE = wire.MAX_MESSAGE  # bytes per message, newline excluded
MAX_DEPTH = wire.MAX_DEPTH
READ_CHUNK = 1 << 16
FINISH_TIMEOUT_S = 5.0  # how long shutdown waits for a reply being written to a stalled reader
HOLD_BYTES = 1 << 16  # held replies are written once they reach this size
HOLD_SECONDS = 0.001  # ... or before the next request once the oldest has waited this long
_SPACE = frozenset(b" \t\n\r\x0b\x0c")  # what bytes.strip() removes
_ANSWERING = float("inf")  # Output.last_active while a message is being answered


class Output:
    """Whole-message writes to a file descriptor, serialised; quiet once the reader is gone.

    :meth:`send` writes at once (after any held replies); :meth:`hold` keeps a reply
    for the next :meth:`flush`, writing when :data:`HOLD_BYTES` are held: at most that
    much plus one reply is ever held. Messages are written, and the input read, by ``codec``
    (promptops.serve.codec); None is the stdlib codec's own functions, ``wire``'s, without
    importing the codec module on the cold path (orjson spells some floats otherwise, so
    stdio's bytes stay the standard library's).
    """

    def __init__(self, fd: int, codec: Codec | None = None) -> None:
        self._fd = fd
        self._encode = wire.encode if codec is None else codec.encode
        self.parse = wire.parse if codec is None else codec.parse
        self._lock = threading.Lock()
        self.closed = False
        self._held: list[bytes] = []
        self._held_bytes = 0
        self.held_since: float | None = None  # when the oldest held reply was made
        # when the last message was answered (_ANSWERING while one is): the follower warms
        # up once the client is idle (follow.py, WARM_IDLE_S), not between its requests
        self.last_active = time.monotonic()

    def idle_for(self) -> float:
        """Seconds since the last message was answered; negative while one is.

        Counted from the read alone, one slow answer made a busy client look idle: at
        100,000 prompts in 100 packages a get that met a collector's pass took 0.22 s,
        the follower's warm-up (seconds of JSON, holding the GIL) began right after it,
        in the middle of the client's gets, and the gets after it waited for it
        (docs/benchmarks.md, "The many layout's get p99, session 21")."""
        return time.monotonic() - self.last_active

    def send(self, message: Outbound) -> None:
        data = self._encode(message) + b"\n"
        with self._lock:
            if not self.closed:
                self._write(self._take(data) if self._held else data)

    def hold(self, message: Outbound) -> None:
        """Write ``message`` with the next :meth:`flush` (or now, if enough is held)."""
        data = self._encode(message) + b"\n"
        with self._lock:
            if self.closed:
                return
            if self.held_since is None:
                self.held_since = time.monotonic()
            self._held.append(data)
            self._held_bytes += len(data)
            if self._held_bytes >= HOLD_BYTES:
                self._write(self._take())

    def flush(self) -> None:
        """Write the held replies, if any."""
        if self._held:
            with self._lock:
                if self._held and not self.closed:
                    self._write(self._take())

    def _take(self, after: bytes = b"") -> bytes:
        data = b"".join(self._held) + after
        self._held, self._held_bytes, self.held_since = [], 0, None
        return data

    def finish(self, messages: list[Json], timeout: float = FINISH_TIMEOUT_S) -> None:
        """Write ``messages`` after any reply in progress or held, then accept no more."""
        if not self._lock.acquire(timeout=timeout):  # a writer stuck on a reader that
            self.closed = True  # stopped reading: nothing more can reach it anyway
            return
        try:
            if self._held and not self.closed:
                self._write(self._take())
            for message in messages:
                if not self.closed:
                    self._write(self._encode(message) + b"\n")
            self.closed = True
        finally:
            self._lock.release()

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            try:
                written = os.write(self._fd, view)
            except BlockingIOError:  # a non-blocking pipe that is full: wait, then go on
                _wait(self._fd, writable=True)
                continue
            except OSError:  # EPIPE and friends: the client hung up
                self.closed = True
                _silence(self._fd)
                return
            view = view[written:]


def _wait(fd: int, *, writable: bool) -> None:
    import select  # only a non-blocking descriptor ever waits: not imported at start

    want = ([], [fd]) if writable else ([fd], [])
    try:
        select.select(want[0], want[1], [fd], 1.0)
    except (OSError, ValueError):  # no select() for pipes (Windows): just wait a little
        time.sleep(0.01)


def _silence(fd: int) -> None:
    """Point the dead stdout at /dev/null so interpreter shutdown cannot complain."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, fd)
        os.close(devnull)
    except OSError:
        pass


def lines(fd: int, before_read: Callable[[], None] | None = None
          ) -> Iterator[bytes | None]:
    """The lines on ``fd`` without their newline, and None for each one over MAX_LINE.

    Reads the raw descriptor (no buffered reader whose lock a thread blocked in it would
    hold at interpreter exit) in chunks split at C speed; a line longer than MAX_LINE is
    reported as soon as it is known to be too long, and the rest of it is dropped as it
    arrives, never kept. A final line without a newline still counts; an unreadable
    descriptor is EOF. ``before_read`` is called before each read (which may wait).
    """
    parts: list[bytes] = []  # the line in progress, when it spans chunks
    size = 0
    skipping = False  # inside a line already reported as too long
    while True:
        if before_read is not None:
            before_read()
        chunk = _read(fd)
        if not chunk:
            if parts and not skipping:
                yield b"".join(parts)
            return
        pieces = chunk.split(b"\n")
        rest = pieces.pop()  # after the chunk's last newline: the start of the next line
        for piece in pieces:
            if skipping:  # this piece ends the line that was too long
                skipping = False
                continue
            if parts:
                parts.append(piece)
                size += len(piece)
                piece = b"".join(parts)
                parts = []
            else:
                size = len(piece)
            yield piece if size <= MAX_LINE else None
            size = 0
        if rest and not skipping:
            parts.append(rest)
            size += len(rest)
            if size > MAX_LINE:
                parts, size, skipping = [], 0, True
                yield None


def _read(fd: int) -> bytes:
    while True:
        try:
            return os.read(fd, READ_CHUNK)
        except BlockingIOError:  # a non-blocking stdin: wait for data
            _wait(fd, writable=False)
        except OSError:
            return b""


class _Loop:
    """Reads and answers lines until EOF or a closed stdout (runs in the worker thread)."""

    def __init__(self, dispatcher: Dispatcher, session: Session, out: Output, fd: int) -> None:
        self.dispatcher, self.session, self.out, self.fd = dispatcher, session, out, fd
        self._parse = out.parse  # the codec the output writes with reads the input
        self.stopping = False  # set by the main thread: the connection has ended
        self.done = False  # set by the worker: it has left run()

    def run(self) -> None:
        out = self.out
        for line in lines(self.fd, out.flush):  # held replies go out before a read waits
            if self.stopping or out.closed:
                return
            if line is not None and (not line or line[0] in _SPACE) and not line.strip():
                continue  # blank (a message starts with a bracket: its strip is not made)
            out.last_active = _ANSWERING  # not idle (idle_for < 0) until it is answered
            now = time.monotonic()
            since = out.held_since
            if since is not None and now - since >= HOLD_SECONDS:
                out.flush()
            try:
                self.answer(line)
            except Exception:  # a bug must cost one line, never the server
                log_bug()
            finally:
                out.last_active = time.monotonic()

    def answer(self, line: bytes | None) -> None:
        dispatcher, session, out = self.dispatcher, self.session, self.out
        if line is None:
            out.hold(dispatcher.reject(session, jsonrpc.oversized(MAX_LINE)))
            return
        try:
            message = self._parse(line)
        except wire.MessageError:  # jsonrpc.parse words it (the parse gives the same error)
            try:
                message = jsonrpc.parse(line, self._parse)
            except jsonrpc.RpcError as exc:
                out.hold(dispatcher.reject(session, exc))
                return
        replies: list[Outbound]
        try:
            replies = dispatcher.handle(session, message)
        except Exception:
            log_bug()
            replies = list(jsonrpc.internal_error(message))
        if self.stopping:
            return  # the connection was ended meanwhile: this reply would come too late
        for reply in replies:
            out.hold(reply)


class Signals:
    """SIGTERM and SIGINT, recorded instead of raised, waking :func:`serve`'s main thread.

    Install it as early as possible (before bundles load): a signal that arrives before
    the loop starts is then remembered and ends the server as soon as it is ready. It
    stays installed until the process exits, so a late signal is never fatal. On POSIX
    the C-level handler writes to a pipe (``signal.set_wakeup_fd``) that the main thread
    blocks on; Windows has no such pipes (and a kill there is TerminateProcess, which no
    handler sees), so the main thread polls for Ctrl-C and Ctrl-Break instead.
    """

    def __init__(self) -> None:
        self.received = False
        self._woken = threading.Event()
        self._pipe: tuple[int, int] | None = None
        if os.name == "posix":
            read_end, write_end = os.pipe()
            os.set_blocking(write_end, False)
            self._pipe = (read_end, write_end)

    def install(self) -> bool:
        """Take over SIGTERM/SIGINT; False when not called from the main thread."""
        if threading.current_thread() is not threading.main_thread():
            return False
        try:
            if self._pipe is not None:
                signal.set_wakeup_fd(self._pipe[1], warn_on_full_buffer=False)
            for name in ("SIGTERM", "SIGINT", "SIGBREAK"):
                if hasattr(signal, name):
                    signal.signal(getattr(signal, name), self._note)
        except ValueError:
            return False
        return True

    def _note(self, signum: int, frame: FrameType | None) -> None:
        """Only a flag: the handler takes no lock and calls nothing.

        Python runs a handler at the next bytecode boundary of the main thread, also
        inside a handler still running, so a signal that lands while one is in a lock's
        critical section runs the next handler there. It set an ``Event`` here, whose
        ``set`` holds the event's (non-reentrant) lock: the nested handler waited for
        that lock forever, each further signal nesting one more handler, until a
        ``RecursionError`` ended serve with exit 3 (session 18: 4 of ~220 runs of a SIGTERM
        storm at load 20-23), or, with no further signal, serve hung. The main thread
        is woken by the wakeup pipe (POSIX: ``set_wakeup_fd``, written by the C-level
        handler) or sees the flag between its short waits (Windows)."""
        self.received = True

    @staticmethod
    def hold() -> None:
        """Keep SIGTERM/SIGINT pending in the calling thread from now on.

        Other threads call it first thing, so signals reach only the main thread; the
        main thread calls it when it is done, because interpreter shutdown puts the
        default (fatal) handlers back and a signal then would end the process with
        -15 after it did everything right. A signal held until exit is dropped.
        (Windows has no signal masks and needs none: nothing but Ctrl-C arrives.)
        """
        if hasattr(signal, "pthread_sigmask"):
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})

    @staticmethod
    def ignore() -> None:
        """From now on SIGTERM/SIGINT are ignored, process-wide (the main thread, at the end).

        :meth:`hold` alone is not enough: interpreter shutdown puts the default handlers
        back, and a signal then reaches any thread that does not block it (a timer thread,
        a library's) and ends the process with -15 after its replies were written (issue
        23, defect 19). An *ignored* signal is the one disposition shutdown leaves as it is.
        """
        if threading.current_thread() is not threading.main_thread():
            return
        for name in ("SIGTERM", "SIGINT"):
            with contextlib.suppress(ValueError, OSError):
                signal.signal(getattr(signal, name), signal.SIG_IGN)

    def wake(self) -> None:
        self._woken.set()
        if self._pipe is not None:
            with contextlib.suppress(OSError):
                os.write(self._pipe[1], b"\0")

    def wait(self) -> None:
        if self._pipe is not None:
            while not os.read(self._pipe[0], 64):  # read retries on EINTR (PEP 475)
                pass
        else:  # short waits: Ctrl-C (the flag, set by _note) is seen between them
            while not (self.received or self._woken.wait(0.2)):
                pass


def serve(dispatcher: Dispatcher, out: Output, fd: int = 0,
          signals: Signals | None = None) -> bool:
    """Answer messages from ``fd`` as one session until EOF, a signal or a closed stdout.

    Returns False when a request was still being answered (its worker thread is left
    running): the caller should then leave with ``os._exit`` once it has cleaned up.
    """
    signals = signals or Signals()
    session = dispatcher.open(out.send)
    loop = _Loop(dispatcher, session, out, fd)
    if not signals.install():  # not the main thread: no signals to honour, run inline
        loop.run()
        out.finish(dispatcher.close(session))
        return True

    def work() -> None:
        Signals.hold()
        try:
            loop.run()
        except BaseException:  # the main thread must hear of any end, and why
            log_bug()
        finally:
            loop.done = True
            signals.wake()

    worker = threading.Thread(target=work, name="promptops-stdio", daemon=True)
    worker.start()
    signals.wait()
    loop.stopping = True
    out.finish(dispatcher.close(session))
    return loop.done
