"""The render watchdog sleeps until the earliest deadline it watches (issue 26).

It no longer polls: it waits for a render, then sleeps until that render's deadline. These
tests hold the two cases a sleeping thread could miss: a render whose deadline is earlier
than the one the thread sleeps toward, and one that starts while it waits for none. Each
render is a pure-Python loop that only the watchdog can stop; the loop's own bound (far
past any deadline) turns a missed deadline into a failure instead of a hang.
"""

from __future__ import annotations

import os
import threading
import time

import pytest

from promptops.sandbox import limits, watchdog
from promptops.sandbox.limits import Budget, BudgetExceeded, Limits

SPIN_BOUND_S = 60.0  # a loop still running this long means the watchdog never fired


def _spin_until_interrupted(deadline_in: float) -> bool:
    """A render of the calling thread that only the watchdog ends: True if it was.

    The render is registered inside the ``try``: on a loaded machine the thread can be
    descheduled for longer than ``deadline_in`` right after ``enter``, and the timeout then
    lands at its next bytecode, which must already be inside the ``try`` (it escaped
    before, and the test failed on a timing it cannot hold)."""
    tid = threading.get_ident()
    stop = time.monotonic() + SPIN_BOUND_S
    interrupted = False
    try:
        watchdog.enter(time.monotonic() + deadline_in)
        while time.monotonic() < stop:
            pass
    except watchdog.RenderTimeout:
        interrupted = True
    finally:
        token = watchdog._active.get(tid)  # registered first thing in enter
        fired = token is not None and watchdog.leave(token)
    return interrupted and fired


def test_a_render_with_an_earlier_deadline_is_stopped_while_it_sleeps_toward_a_later():
    long_entered = threading.Event()
    done = threading.Event()
    outcome: list[bool] = []

    def slow_render() -> None:  # a render with a far deadline, which the thread sleeps toward
        token = watchdog.enter(time.monotonic() + 3600)
        long_entered.set()
        done.wait(SPIN_BOUND_S)
        outcome.append(watchdog.leave(token))

    other = threading.Thread(target=slow_render)
    other.start()
    try:
        assert long_entered.wait(SPIN_BOUND_S)
        time.sleep(0.05)  # let the watchdog thread scan and go to sleep toward the far one
        assert _spin_until_interrupted(0.05)
    finally:
        done.set()
        other.join()
    assert outcome == [False]  # the far render was never fired at


def _reaches(state: object) -> bool:
    """Whether the watchdog thread's next wake reaches ``state`` (within the spin bound)."""
    stop = time.monotonic() + SPIN_BOUND_S
    while time.monotonic() < stop:
        if watchdog._wake[0] == state:
            return True
        time.sleep(0.05)
    return False


def test_a_render_that_starts_while_nothing_is_watched_is_stopped():
    assert _spin_until_interrupted(0.05)
    time.sleep(0.05)  # the thread lingers: nothing to watch, it wakes after LINGER_S
    assert _spin_until_interrupted(0.05)
    # after QUIET_SCANS lingers it waits for a render without a timeout; the render that
    # starts then wakes it
    assert _reaches(float("inf"))
    assert _spin_until_interrupted(0.05)
    assert not watchdog._active


def test_a_budget_is_one_watched_render_and_leaves_nothing_behind():
    """``Budget.__enter__``/``__exit__`` write ``watchdog.enter``/``leave`` and ``release``
    out (issue 26): the same registration, the same stop, the same state afterwards."""
    outer = limits.current()
    # The 50 ms bound, entered with a far deadline: the checks before the spin are not
    # part of the render being timed (at load 20 they took longer than 50 ms, and the
    # nested enter raised "took longer" before the spin began). The deadline is brought
    # near just before the spin, on the token Budget.__enter__ registered.
    budget = Budget(Limits(render_timeout_ms=50), deadline=time.monotonic() + SPIN_BOUND_S)
    interrupted = False
    with pytest.raises(BudgetExceeded, match=r"render took longer than 0\.05 s"), budget:
        assert limits.current() is budget
        token = watchdog._active[threading.get_ident()]
        assert token[0] == budget.deadline
        with budget:  # entered again (serve around a request, the renderer inside)
            pass
        assert watchdog._active.get(threading.get_ident()) is token
        stop = time.monotonic() + SPIN_BOUND_S
        try:
            budget.deadline = budget.wall = token[0] = token[3] = time.monotonic() + 0.05
            watchdog.wake()  # as __enter__ does for a deadline before the thread's next wake
            while time.monotonic() < stop:
                pass
        except watchdog.RenderTimeout:
            interrupted = True
    assert interrupted and budget.fired
    assert threading.get_ident() not in watchdog._active
    assert limits.current() is outer and budget._token is None


def test_a_budget_fired_at_but_not_yet_delivered_raises_at_its_exit():
    budget = Budget(Limits(render_timeout_ms=10_000))
    with pytest.raises(BudgetExceeded, match="render took longer than 10 s"), budget:
        token = watchdog._active[threading.get_ident()]
        token[1] = True  # as the thread marks a render it is about to interrupt
    assert threading.get_ident() not in watchdog._active
    assert limits.current() is not budget
    for _ in range(1000):  # nothing fired is left to land after the request
        pass


@pytest.mark.parametrize("wake_at", [float("inf"), "linger"])
def test_a_render_registered_during_the_scan_is_looked_for_before_the_thread_sleeps(
        wake_at: object) -> None:
    """A render whose enter ran while the thread scanned read the wake time -inf and set no
    alarm; the scan may not have seen it. Before the thread sleeps (until a later time, or
    without a timeout) it looks again: such a render, unfired, with a deadline before the
    wake, sends it back to scan; a fired one or a later deadline does not. Without this
    look the thread slept past the render's deadline (for ever, when it had gone idle), and
    a render that calls nothing ran unbounded until the next render's alarm."""
    # "linger": a finite wake time, as the thread writes while it lingers. Far ahead, as the
    # token's deadline is, so the live watchdog thread, which scans _active meanwhile,
    # never fires at the token (with a deadline 0.2 s ahead it did, at load 20, and the
    # first assertion failed)
    until = float("inf") if wake_at == float("inf") else time.monotonic() + 7200
    tid = -12345  # no thread: nothing is ever delivered to it
    far = time.monotonic() + 3600
    token: list[float | bool] = [far, False, float("inf"), far]
    try:
        watchdog._active[tid] = token
        assert watchdog._publish_wake(until) is True
        assert watchdog._wake[0] == until
        token[1] = True  # fired already: nothing to wake for
        assert watchdog._publish_wake(until) is False
        token[0], token[1] = until, False  # a deadline at the wake itself: not before it
        assert watchdog._publish_wake(until) is False
    finally:
        watchdog._active.pop(tid, None)
        watchdog.wake()  # let the thread write its own wake time again


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_forked_child_has_a_watchdog_of_its_own() -> None:
    """A fork copies only the forking thread: the child must start its own watchdog, not
    trust the parent's "started" (the review's pool workers rendered unbounded)."""
    watchdog.wake()  # the parent's thread is running before the fork
    pid = os.fork()
    if pid == 0:  # the child: a render that only the watchdog can stop
        code = 1
        try:
            code = 0 if _spin_until_interrupted(0.05) else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def _sleep_in(budget: Budget, seconds: float, checks: bool) -> str:
    """A render that waits (as one blocked or descheduled does) ``seconds`` on the wall
    clock, using next to no CPU: "done", or how its budget stopped it. With ``checks`` it
    reads its clock as the sandbox does between calls, else only the watchdog sees it."""
    stop = time.monotonic() + seconds
    try:
        with budget:
            while time.monotonic() < stop:
                time.sleep(0.01)
                if checks:
                    budget.check_time()
    except watchdog.RenderTimeout:
        budget.settle()
        return budget.late()
    except BudgetExceeded as exc:
        return str(exc)
    return "done"


@pytest.mark.skipif(not limits.CPU_CLOCKS, reason="the bound is wall time on this platform")
@pytest.mark.parametrize("checks", [True, False])
def test_an_offline_render_is_bounded_by_cpu_time_not_by_waiting(checks: bool) -> None:
    """lint, test, diff and build: a render that waits past its bound on the wall clock
    (0.2 s) but spends little CPU is not failed; only its CPU time counts."""
    assert _sleep_in(Budget(Limits(render_timeout_ms=200)), 0.6, checks) == "done"


@pytest.mark.skipif(not limits.CPU_CLOCKS, reason="the bound is wall time on this platform")
@pytest.mark.parametrize("checks", [True, False])
def test_a_served_render_that_waits_ends_at_the_wall_backstop(checks: bool) -> None:
    """A served request also has a wall-clock bound, 5 x its CPU bound (here 1 s), so a
    render that is blocked or starved still ends and frees its worker."""
    start = time.monotonic()
    text = _sleep_in(Budget(Limits(render_timeout_ms=200).served), SPIN_BOUND_S,
                     checks)
    assert text == ("render took longer than 1 s of wall time (a served request's "
                    "backstop, 5 x renderTimeoutMs)")
    assert 1.0 <= time.monotonic() - start < 30
