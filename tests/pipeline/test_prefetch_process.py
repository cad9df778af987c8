"""Validation on both cores reports what one core reports, checked in a fresh process.

``promptops.pipeline.prefetch`` forks only when no other thread is alive, and a test run
may have threads left by earlier tests: here a fresh interpreter, which has none, compares
the two outcomes (on one core it checks that prefetch stays in one process).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = """
import test_prefetch
one, both = test_prefetch.one_and_both()
print("same" if one == both else "different")
"""


def test_both_cores_report_what_one_core_reports_in_a_fresh_process() -> None:
    here = Path(__file__).parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(here), str(here.parent)])}
    done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True,
                          text=True, check=False, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "same"
