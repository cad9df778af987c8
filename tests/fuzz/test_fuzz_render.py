"""The render fuzz driver (tests/fuzz/fuzz_render.py), run for a few seconds with a fixed seed.

CI runs it for 6 s (``CI`` set), a local run for 4 s; ``PROMPTOPS_FUZZ_RENDER_SECONDS``
sets any other budget (and ``PROMPTOPS_FUZZ_SEED`` the seed). The driver is a separate
process so that its peak RSS is its own: without the size checks one case builds
gigabytes, without linear-time patterns one case never ends.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from helpers.repo import REPO_ROOT

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "hardening"))
from hardening_helpers import record

DRIVER = Path(__file__).resolve().parent / "fuzz_render.py"
RSS_LIMIT_MB = 250
MIN_CASES = 40  # the driver goes on past its time box until it ran these (a loaded host)


def budget() -> str:
    return os.environ.get("PROMPTOPS_FUZZ_RENDER_SECONDS") or ("6" if os.environ.get("CI")
                                                               else "4")


def test_fuzzing_render_stays_within_the_bounds() -> None:
    seed = os.environ.get("PROMPTOPS_FUZZ_SEED", "1")
    proc = subprocess.run([sys.executable, str(DRIVER), "--seconds", budget(), "--seed", seed,
                           "--min-cases", str(MIN_CASES)],
                          capture_output=True, text=True, cwd=REPO_ROOT, timeout=300)
    report = proc.stdout + proc.stderr
    assert "crashes: 0\n" in proc.stdout, report
    assert "violations: 0\n" in proc.stdout, report
    cases = int(proc.stdout.split("cases: ")[1].split()[0])
    assert cases >= MIN_CASES, report  # it really rendered something
    peak = float(proc.stdout.split("peak rss mb: ")[1].split()[0])
    assert peak < RSS_LIMIT_MB, report
    assert proc.returncode == 0, report
    record("bounded rendering", "generated pathological patterns (nested and overlapping "
           "quantifiers, big counts, Unicode classes, constructs RE2 lacks) against long "
           "values, and chains of filters, operators, methods and block captures over huge "
           "or shared values, in loops", "render/serve",
           f"0 crashes, 0 violations: every case rendered within the output bound or failed "
           f"with one clear -32602/-32603 line within the deadline plus 1 s; driver peak RSS "
           f"under {RSS_LIMIT_MB} MB",
           "test_fuzz_render.py::test_fuzzing_render_stays_within_the_bounds")
