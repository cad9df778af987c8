"""Validation on both cores reports what one core reports, checked in a fresh process.

``promptops.pipeline.prefetch`` forks only when no other thread is alive, and a test run
may have threads left by earlier tests: here a fresh interpreter, which has none, compares
the two outcomes (on one core it checks that prefetch stays in one process).
"""

from __future__ import annotations

from pathlib import Path

from helpers.fresh import fresh_stdout

SCRIPT = """
import test_prefetch
one, both = test_prefetch.one_and_both()
print("same" if one == both else "different")
"""


def test_both_cores_report_what_one_core_reports_in_a_fresh_process() -> None:
    lines = fresh_stdout(SCRIPT, Path(__file__).parent)
    assert lines == ["same"], lines
