"""The hostile-line fuzz driver (fuzz_stdio.py) for a few seconds with a fixed seed.

CI runs it for about 10 s (``CI`` set), a local run for 6 s; ``PROMPTOPS_FUZZ_SECONDS``
sets any other budget for a longer opt-in run (and ``PROMPTOPS_FUZZ_SEED`` the seed).
The servers it drives are real subprocesses; the driver itself runs in this process.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import fuzz_stdio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "hardening"))
from hardening_helpers import record


def test_hostile_lines_cost_one_bounded_reply_each() -> None:
    seconds = float(os.environ.get("PROMPTOPS_FUZZ_SECONDS") or (10 if os.environ.get("CI")
                                                                 else 6))
    report = fuzz_stdio.run(seconds, int(os.environ.get("PROMPTOPS_FUZZ_SEED", "1")),
                            min_lines=30)
    assert report.violations == 0, "\n".join(report.details)
    assert report.most_replies <= 1
    assert report.lines >= 30 and all(report.slowest.values())  # every class was sent
    record("serve protocol fuzzing", "hostile lines and batches: unterminated strings of "
           "escaped quotes, nesting at and far past the bound, values at and past the bound, "
           "escape soup, NaN/Infinity, integers of thousands of digits, batches of 0 to 150 "
           "messages of any content", "serve",
           "0 violations: at most one reply per line, exactly the documented one (-32700 for "
           "the bounds and non-JSON constants, long integer ids echoed), each within the hang "
           "bound, VmHWM under the limit, exit 0 with nothing but the start line on stderr",
           "test_fuzz_stdio.py::test_hostile_lines_cost_one_bounded_reply_each")
