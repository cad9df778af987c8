"""A request deadline that also stops template code which never calls anything.

Checking the clock in ``call()`` misses loops that only iterate (``{% for c in s %}``
nested over a long string) and pure-Python filters stuck in one call (``wordwrap``). One
daemon thread, started on first use, wakes a few times a second and raises
:class:`RenderTimeout` inside any request thread past its deadline through CPython's
``PyThreadState_SetAsyncExc``. A request (a :class:`promptops.sandbox.limits.Budget`, entered
once around validation and every template) only writes one dict entry on entry and exit,
so the fast path costs no thread switch. The exception lands between two bytecodes;
:func:`leave` clears one that was fired but not yet delivered, so it can never surface
outside the request that earned it.

An asynchronous exception cannot interrupt a C call, so this is a bound only together
with the size checks in :mod:`promptops.sandbox.limits`, :mod:`promptops.sandbox.sizing` and
:mod:`promptops.sandbox.filters`, which keep every C call a template can reach short: the
deadline holds to within the longest such call plus one poll (docs/reliability.md).
"""

from __future__ import annotations

import signal
import threading
import time

POLL_S = 0.1

_lock = threading.Lock()
_active: dict[int, list[float | bool]] = {}  # thread id -> [deadline, fired]
_started = False
_ident = threading.get_ident  # called twice per request


class RenderTimeout(BaseException):
    """Raised asynchronously in a render thread that ran past its deadline."""


def enter(deadline: float) -> list[float | bool]:
    """Register the calling thread's render; returns the token :func:`leave` needs."""
    global _started
    if not _started:
        _start()
    token: list[float | bool] = [deadline, False]
    _active[_ident()] = token
    return token


def leave(token: list[float | bool]) -> bool:
    """Unregister; True if the watchdog fired for this render (delivered or not)."""
    tid = _ident()
    with _lock:
        if _active.get(tid) is token:
            del _active[tid]
        if token[1]:
            _set_async(tid, None)  # clear it if it has not been delivered yet
    return bool(token[1])


def _start() -> None:
    global _started
    with _lock:
        if _started:
            return
        threading.Thread(target=_watch, name="promptops-render-watchdog", daemon=True).start()
        _started = True


def _watch() -> None:
    # A process-wide SIGTERM or SIGINT goes to any thread that does not block it; if this
    # one took it, the process would die inside ``atomic_write``, which holds SIGTERM back
    # only in the writing thread, and leave its named temp file behind, or miss serve's
    # orderly exit, whose handlers run in the main thread.
    if hasattr(signal, "pthread_sigmask"):  # Windows has no signal masks (docs/platforms.md)
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
    while True:
        time.sleep(POLL_S)
        if not _active:
            continue
        now = time.monotonic()
        with _lock:
            for tid, token in list(_active.items()):
                if not token[1] and now > token[0]:
                    token[1] = True
                    _set_async(tid, RenderTimeout)


def _set_async(tid: int, exc: type[BaseException] | None) -> None:
    import ctypes

    ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(tid), ctypes.py_object(exc) if exc is not None else None
    )
