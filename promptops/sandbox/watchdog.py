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

The thread sleeps until the earliest deadline of the renders it watches, not by a clock:
with no render in progress it waits without waking, and a render that starts while it
sleeps toward a later deadline (or while it waits for none) wakes it, so it fires at each
deadline itself, never up to a poll later. With nothing to watch it lingers (wakes every
:data:`LINGER_S` a few times) before it waits for a render: renders come in runs, and
waking it for each would cost an alarm and a thread switch a request. It used to wake 10
times a second whether or not anything rendered: CPU while idle, and a GIL hand-over the
event loop's thread paid under load (issue 26). Now it wakes twice a second under load
and not at all when idle.

The bound is the render thread's CPU time (:mod:`promptops.sandbox.limits`), which another
thread reads through ``pthread_getcpuclockid``: the thread sleeps toward each render's
*checkpoint*, the earliest wall-clock moment its CPU time can reach the bound (a CPU clock
runs no faster than the wall clock), and there reads the render's CPU clock: past the
bound (or past a served request's wall backstop) it fires, else it moves the checkpoint on
by the CPU time left (:func:`_over`). A render that ends within its bound's wall time, the
usual one, is never read.

A fork copies only the forking thread: a child (the review's and the test runner's pool
workers, the build's and lint's forked halves) would inherit a watchdog marked started
with no thread running it, and a render there that calls nothing ran unbounded. So a fork
resets this module in the child (:func:`_forked`, registered with
``os.register_at_fork``): the child starts its own thread with its first render. The lock
is held across the fork, so the child never inherits it taken by the parent's thread.

An asynchronous exception cannot interrupt a C call, so this is a bound only together
with the size checks in :mod:`promptops.sandbox.limits`, :mod:`promptops.sandbox.sizing` and
:mod:`promptops.sandbox.filters`, which keep every C call a template can reach short: the
deadline holds to within the longest such call plus the thread's wake-up (docs/reliability.md).
"""

from __future__ import annotations

import os
import threading
import time

from promptops.signals import signal

_lock = threading.Lock()
# thread id -> [checkpoint, fired, CPU deadline, wall deadline] (Budget's deadline,
# cpu_deadline and wall: the checkpoint is the earliest wall-clock moment the render can
# pass its bound, the CPU deadline is on the render thread's CPU clock)
_active: dict[int, list[float | bool]] = {}
_started = False
_ident = threading.get_ident  # called twice per request
# When the thread wakes next (monotonic seconds): inf while it waits for a render, -inf
# while it scans _active; a render whose deadline is earlier sets _alarm (see _watch).
_wake = [float("inf")]
_alarm = threading.Event()


class RenderTimeout(BaseException):
    """Raised asynchronously in a render thread that ran past its deadline."""


def enter(deadline: float) -> list[float | bool]:
    """Register the calling thread's render, bounded by the wall-clock ``deadline``;
    returns the token :func:`leave` needs."""
    global _started
    if not _started:
        _start()
    token: list[float | bool] = [deadline, False, _INF, deadline]
    _active[_ident()] = token
    if deadline < _wake[0]:  # it sleeps past this deadline, or waits for none: wake it
        _alarm.set()
    return token


def wake() -> None:
    """Start the thread on first use, and wake it: a render was registered (in
    :data:`_active`, by :func:`enter` or ``Budget.__enter__``, which writes :func:`enter`
    out) whose deadline is earlier than the thread's next wake."""
    if not _started:
        _start()
    _alarm.set()


def cancel(tid: int) -> None:
    """Clear the timeout fired at thread ``tid`` if it has not been delivered yet (called
    holding :data:`_lock`, once the thread's render is unregistered)."""
    _set_async(tid, None)


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
    quiet = 0  # scans in a row that found nothing to watch
    while True:
        # -inf while it scans: a render registered meanwhile sets no alarm (the thread is
        # awake), and one the scan did not see is found by _publish_wake once the next wake
        # time is written
        _wake[0] = -_INF
        _alarm.clear()
        now = time.monotonic()
        nearest = _INF
        with _lock:
            for tid, token in list(_active.items()):
                if token[1]:
                    continue
                if now > token[0] and _over(tid, token, now):
                    token[1] = True
                    _set_async(tid, RenderTimeout)
                elif token[0] < nearest:
                    nearest = token[0]
        if nearest == _INF:  # nothing to watch
            quiet += 1
            # idle: wait for a render (its enter sets the alarm); else renders come in
            # runs: a render that starts within LINGER_S of a finished one (its deadline
            # later than this wake) must not cost an alarm, a wake-up of this thread and
            # a GIL hand-over each
            nearest = _INF if quiet > QUIET_SCANS else now + LINGER_S
        else:
            quiet = 0
        missed = _publish_wake(nearest)
        if missed:
            continue  # scan again: a render registered during this scan
        if nearest == _INF:
            _alarm.wait()
            quiet = 0
            continue
        _alarm.wait(nearest - now + _LATE)  # just past it: `now > deadline` fires


def _over(tid: int, token: list[float | bool], now: float) -> bool:
    """A render past its checkpoint: whether it is over its bound (its wall deadline, or its
    thread's CPU deadline); if not, its checkpoint moves to the next moment it can be, at
    least the CPU time it has left away. Called holding :data:`_lock`: the thread is alive
    (it takes the lock to leave), so its CPU clock can be read."""
    if now > token[3]:
        return True
    if token[2] == _INF:
        token[0] = token[3]
        return False
    try:
        left = token[2] - time.clock_gettime(time.pthread_getcpuclockid(tid))
    except OSError:  # (a thread that is gone has nothing left to stop)
        left = _INF
    if left <= 0:
        return True
    token[0] = min(now + left, token[3])
    return False


def _publish_wake(wake_at: float) -> bool:
    """Write the next wake time, ``wake_at``, where renders read it; then return whether a render
    the scan did not see has a deadline before it. A render registered during the scan read
    the wake time -inf and set no alarm (``deadline < -inf`` is false), so the thread must
    look once more after it writes the new wake time: it would otherwise sleep past that
    deadline, or without a timeout at all, and a render that calls nothing would run
    unbounded until the next render's alarm. A render registered after the write reads
    ``wake_at`` and sets the alarm itself."""
    _wake[0] = wake_at
    with _lock:
        return any(not token[1] and token[0] < wake_at for token in _active.values())


_INF = float("inf")
# How far past a deadline the thread wakes. The render's own clock checks
# (``Budget.check_time``, between the calls template code makes) raise at the deadline with
# the message that names the message and the cause; the watchdog is the backstop for code
# that calls nothing. Woken 1 ms past it, the two raced and a timed-out get's error wording
# depended on which won (session 13's clone run); 50 ms lets the precise check win, as the
# 100 ms poll this thread had before session 12 did, and stays within that poll's lateness.
_LATE = 0.05
LINGER_S = 0.5  # with nothing to watch, wake after this long (a render may start meanwhile)
QUIET_SCANS = 4  # ... this many times, then wait until a render starts


def _forked() -> None:
    """In a forked child: no watchdog thread (a fork copies only the forking thread), no
    renders of the parent's other threads, a fresh alarm (the parent's thread may have held
    its condition's lock). The objects :mod:`promptops.sandbox.limits` imported stay the
    same objects: cleared, not replaced. The child's first render starts its thread."""
    global _started, _alarm
    _started = False
    _active.clear()
    _wake[0] = _INF
    _alarm = threading.Event()
    _lock.release()  # taken by the forking thread before the fork (_before_fork)


def _before_fork() -> None:
    """Hold the lock across the fork: the watchdog thread may hold it mid-scan, and a
    child that inherited it taken would wait for ever at its first render's exit."""
    _lock.acquire()


if hasattr(os, "register_at_fork"):  # POSIX; Windows does not fork
    os.register_at_fork(before=_before_fork, after_in_parent=_lock.release,
                        after_in_child=_forked)


def _set_async(tid: int, exc: type[BaseException] | None) -> None:
    import ctypes

    ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(tid), ctypes.py_object(exc) if exc is not None else None
    )
