"""A wall-clock bound on one piece of work on the main thread (SIGALRM).

Import reads files from strangers: one file's importer must not hold the batch. The bound
raises a BaseException so no ``except Exception`` inside an importer can swallow it.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator


class TooSlow(BaseException):
    """One file's import ran past its bound (a BaseException, so that no
    ``except Exception`` inside an importer can swallow it)."""


@contextlib.contextmanager
def time_bound(seconds: float) -> Iterator[None]:
    """Raise TooSlow in the block after ``seconds`` (SIGALRM; on the main thread of a
    POSIX process, else unbounded: a signal can only be handled there)."""
    if not hasattr(signal, "setitimer") or \
            threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_alarm(signum: int, frame: object) -> None:
        raise TooSlow

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
