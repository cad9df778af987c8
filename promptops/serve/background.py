"""What serve's two followers share: a daemon thread watching what is served (the
committed HEAD, :mod:`promptops.serve.follow`; the working tree, :mod:`promptops.serve.watch`)
and the news it tells the log and the clients. Its own module so that the working-tree
watcher does not import the git follower, and the follower has room for its own work."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from promptops.errors import PromptopsError
from promptops.signals import signal

if TYPE_CHECKING:
    from asyncio import AbstractEventLoop

    from promptops.pipeline.build import Build
    from promptops.pipeline.bundle_types import Bundle
    from promptops.pipeline.collector import Settler

Log = Callable[[str], None]
POLL_S = 0.05  # how often the HEAD follower looks at its refs (follow.py)


class News:
    """What the clients hear as well as stderr, as ``notifications/message`` at ``level``:
    a set that does not build, the recovery, a ref that cannot be read (issue 24;
    docs/serve.md says to whom). A plain class: a dataclass costs the cold start."""

    __slots__ = ("level", "message")

    def __init__(self, level: str, message: str) -> None:
        self.level, self.message = level, message

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.level!r}, {self.message!r})"


class BuildFailed(News):
    """A commit (or working tree) that does not build, or that the gate refused: the last
    good set stays served. Its own type so that what counts failures (the team server's
    ``promptops_failed_builds``) never reads the words of the message."""

    __slots__ = ()


Notify = Callable[[News], None]
# What `build` refuses, serve refuses too (issue 15): a gate gets each freshly built commit
# and returns why it must not be served, or None. serve never imports lint itself (its cold
# path stays light and lint sits beside it): the entry point hands the gate in.
Gate = Callable[["Build"], "str | None"]


def failure(exc: Exception) -> str:
    """Why a build failed, as the log says it: the message, or the bug and a plea."""
    return str(exc) if isinstance(exc, PromptopsError) else (
        f"{type(exc).__name__}: {exc} (a bug in promptops: please report it)")


class Background:
    """A daemon thread that follows what is served (HEAD, or the working tree) until
    :meth:`stop`, handing each good set to ``on_change``. Its signals stay with the main
    thread, which ends the connection (see ``stdio.Signals.hold``)."""

    THREAD = "promptops-follow"

    def __init__(self, log: Log, notify: Notify | None = None) -> None:
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._log = log
        self._notify = notify
        # seconds since the client last asked something (stdio sets it; None: no wait)
        self.idle_for: Callable[[], float] | None = None
        # the serving process's collector (serve's entry point sets it): called once per
        # swap, after the swap's work is done; None leaves the collector as it is
        self.settler: Settler | None = None
        # poll_from: the event loop that polls while this thread sleeps, the signature the
        # thread last saw (None while it is awake), and what wakes it
        self._poller: AbstractEventLoop | None = None
        self._idle: tuple[object, ...] | None = None
        self._wake = threading.Event()

    def _say(self, level: str, message: str) -> None:
        """``message`` to the log (stderr) and, at ``level``, to the clients."""
        self._tell(News(level, message))

    def _tell(self, news: News) -> None:
        self._log(news.message)
        if self._notify is not None:
            self._notify(news)

    def _follows(self) -> bool:
        """Whether there is anything to follow (a fixed ``ref`` never changes)."""
        return True

    def built(self) -> bool:
        """Whether the set served at start was built (its garbage is worth a collection
        before the set is frozen: ``Settler.start``), not loaded from the build cache."""
        return True

    def _settle(self) -> None:
        """After a swap and the work it brought (the listeners told, the build cache
        written): the collector's one pass of it (:class:`~promptops.pipeline.collector.Settler`),
        in this thread, so that no request and no notification waits for it."""
        if self.settler is not None:
            self.settler.swapped()

    def start(self, on_change: Callable[[list[Bundle]], object]) -> None:
        if self._thread is not None or not self._follows():
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._main, args=(on_change,),
                                        name=self.THREAD, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=10)
        self._thread = None

    def poll_from(self, loop: AbstractEventLoop) -> None:
        """Poll the watched files (:meth:`_signature`) from ``loop`` (serve --http's event
        loop, called in its thread) every :data:`POLL_S`, and let the following thread
        sleep until they change whenever it has nothing else to wait for
        (:meth:`_asleep`). Each timed wake of the thread cost ~150 µs of CPU on a 2-core
        VM, more under load, where it also takes the GIL from the requests at every stat
        (~1.5% of a request's CPU, issue 26); the loop is awake for its requests anyway,
        and a poll there is its five stats. A change wakes the thread at once, which then
        waits out the quiet period and rebuilds as before: the same polls, the same
        latency."""
        self._poller = loop
        loop.call_later(POLL_S, self._poll)

    def _poll(self) -> None:
        if self._stop.is_set() or self._poller is None:
            return
        try:
            if self._idle is not None and self._signature() != self._idle:
                self._idle = None
                self._wake.set()
        except Exception:  # the thread looks for itself (and says what is wrong)
            self._idle = None
            self._wake.set()
        finally:
            self._poller.call_later(POLL_S, self._poll)

    def _waited(self, wait: float, last: tuple[object, ...], *, idle: bool) -> bool:
        """Wait for the next look, False on stop: ``wait`` seconds, or, when the thread
        has nothing of its own to wait for (``idle``: no quiet period running, no warm-up
        pending) and an event loop polls for it, asleep until ``last`` changes."""
        if idle and self._poller is not None:
            return self._asleep(last)
        return not self._stop.wait(wait)

    def _asleep(self, last: tuple[object, ...]) -> bool:
        """Sleep until the loop's poll sees ``last`` change (or stop); False on stop."""
        self._wake.clear()
        self._idle = last
        if not self._stop.is_set():
            self._wake.wait()
        return not self._stop.is_set()

    def _signature(self) -> tuple[object, ...]:
        """What the polls compare (a follower that polls says what)."""
        raise NotImplementedError

    def _main(self, on_change: Callable[[list[Bundle]], object]) -> None:
        if hasattr(signal, "pthread_sigmask"):  # POSIX; Windows has no signal masks
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
        self._follow(on_change)

    def _follow(self, on_change: Callable[[list[Bundle]], object]) -> None:
        raise NotImplementedError
