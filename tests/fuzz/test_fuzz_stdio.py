"""The hostile-line fuzz driver (fuzz_stdio.py), run for a few seconds with a fixed seed.

CI runs it for about 10 s (``CI`` set), a local run for 6 s; ``PROMPTOPS_FUZZ_SECONDS``
sets any other budget for a longer opt-in run (and ``PROMPTOPS_FUZZ_SEED`` the seed).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from repo_helpers import REPO_ROOT

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "hardening"))
from hardening_helpers import record

DRIVER = Path(__file__).resolve().parent / "fuzz_stdio.py"


def budget() -> str:
    return os.environ.get("PROMPTOPS_FUZZ_SECONDS") or ("10" if os.environ.get("CI") else "6")


def test_hostile_lines_cost_one_bounded_reply_each() -> None:
    seed = os.environ.get("PROMPTOPS_FUZZ_SEED", "1")
    proc = subprocess.run([sys.executable, str(DRIVER), "--seconds", budget(), "--seed", seed],
                          capture_output=True, text=True, cwd=REPO_ROOT, timeout=600)
    report = proc.stdout + proc.stderr
    assert "invariant violations: 0\n" in proc.stdout, report
    assert "most replies to one line: 1\n" in proc.stdout, report
    sent = int(proc.stdout.split("lines sent: ")[1].split()[0])
    assert sent >= 30, report  # it really talked to servers
    assert proc.returncode == 0, report
    record("serve protocol fuzzing", "hostile lines and batches: unterminated strings of "
           "escaped quotes, nesting at and far past the bound, values at and past the bound, "
           "escape soup, NaN/Infinity, integers of thousands of digits, batches of 0 to 150 "
           "messages of any content", "serve",
           "0 violations: at most one reply per line, exactly the documented one (-32700 for "
           "the bounds and non-JSON constants, long integer ids echoed), each within the hang "
           "bound, VmHWM under the limit, exit 0 with nothing but the start line on stderr",
           "test_fuzz_stdio.py::test_hostile_lines_cost_one_bounded_reply_each")
