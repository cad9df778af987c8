"""Where a thread's CPU clock cannot be read from another thread (macOS, Windows: no
``time.pthread_getcpuclockid``), the render bound stays wall time, served or not.

The platform is made in a real interpreter: the function is deleted from ``time`` before
promptops is imported, as it is missing there. A render that waits (little CPU) is then
stopped at its bound of wall time, where on Linux only a served one is, at 5 x it.
"""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import time
del time.pthread_getcpuclockid
from promptops.sandbox import limits, watchdog
from promptops.sandbox.limits import Budget, BudgetExceeded, Limits

assert not limits.CPU_CLOCKS


def wait(budget):
    start = time.monotonic()
    try:
        with budget:
            while time.monotonic() < start + 30:
                time.sleep(0.01)
    except watchdog.RenderTimeout:
        budget.settle()
        return budget.late(), time.monotonic() - start
    except BudgetExceeded as exc:
        return str(exc), time.monotonic() - start
    return "done", time.monotonic() - start


for budget in (Budget(Limits(200)), Budget(Limits(200).served)):
    text, took = wait(budget)
    print(text, took < 5)
"""


def test_without_thread_cpu_clocks_the_bound_is_wall_time() -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["render took longer than 0.2 s True"] * 2
