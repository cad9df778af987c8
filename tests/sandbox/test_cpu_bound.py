"""The render time bound is the rendering thread's CPU time (Linux), so a loaded machine
does not fail a legitimate render, and a render that spins is still stopped.

Each test pins this thread to one core and starts CPU hogs (real processes) pinned to the
same core, so the render gets a small share of it: its wall time is several times its CPU
time, as on a CI runner at load. With a wall-clock bound the legitimate render failed
here; with the CPU bound it renders, and the spinning one is stopped once it has used its
bound of CPU, later on the wall clock.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from promptops.sandbox.environment import environment, render_bounded
from promptops.sandbox.limits import Budget, BudgetExceeded, Limits

pytestmark = pytest.mark.skipif(
    not (hasattr(time, "pthread_getcpuclockid") and hasattr(os, "sched_setaffinity")),
    reason="the CPU-time bound needs pthread_getcpuclockid (wall time elsewhere)")

HOGS = 6  # the render gets about a seventh of its core
HOG = "import os, sys\nos.sched_setaffinity(0, {int(sys.argv[1])})\nwhile True:\n    pass\n"
# some 0.2 s of CPU, calling nothing: only the bound (a clock read between calls, or the
# watchdog) can stop it
LEGIT = ("{% set s = 'x' * 3000 %}{% for a in s %}{% for b in s %}{% endfor %}{% endfor %}"
         "done")
SPIN = ("{% set s = 'x' * 100000 %}{% for a in s %}{% for b in s %}{% endfor %}{% endfor %}"
        "done")


@contextmanager
def _crowded_core() -> Iterator[None]:
    """This thread and HOGS spinning processes on one core, for the block's duration."""
    before = os.sched_getaffinity(0)
    core = min(before)
    hogs = [subprocess.Popen([sys.executable, "-c", HOG, str(core)]) for _ in range(HOGS)]
    try:
        os.sched_setaffinity(0, {core})  # this thread only (0: the calling thread)
        time.sleep(0.2)  # the hogs are running
        yield
    finally:
        os.sched_setaffinity(0, before)
        for hog in hogs:
            hog.kill()
        for hog in hogs:
            hog.wait()


def _render(source: str, timeout_ms: int) -> tuple[str, float, float]:
    """The render's text (or its error), its wall and its CPU seconds."""
    template = environment({"t": source}).get_template("t")
    wall, cpu = time.monotonic(), time.thread_time()
    try:
        text = render_bounded(template, {}, Budget(Limits(timeout_ms)))
    except BudgetExceeded as exc:
        text = str(exc)
    return text, time.monotonic() - wall, time.thread_time() - cpu


def test_a_render_slowed_by_load_is_not_failed_by_its_cpu_time_bound() -> None:
    _, _, alone = _render(LEGIT, 10_000)
    bound_ms = max(300, int(alone * 3000))  # three times what it needs on its own
    with _crowded_core():
        text, wall, cpu = _render(LEGIT, bound_ms)
    assert wall > bound_ms / 1000, "not slowed by the hogs: this run shows nothing"
    assert text == "done", (text, wall, cpu, bound_ms)


def test_a_spinning_render_is_stopped_after_its_cpu_time_under_load() -> None:
    with _crowded_core():
        text, wall, cpu = _render(SPIN, 300)
    assert text == "render took longer than 0.3 s", (text, wall, cpu)
    assert 0.3 <= cpu < 1.5, (wall, cpu)  # stopped by its CPU time, not by the wall clock
