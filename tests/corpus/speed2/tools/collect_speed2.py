"""Apply the second speed corpus's rule (../README.md) with the first corpus's collector.

Why reuse: the rule's points 2, 3, 5, 6 and 8 are the first speed corpus's, so the decisions
must be made by the very same code (tests/corpus/speed/tools/collect_speed.py); only the
directory differs. Pointing that module at this directory also makes its exclusion list
(every ``repository:`` under tests/ and benchmarks/ outside the corpus being collected)
include the first speed corpus's manifest and candidates, as this rule's point 1 asks, and
its list of earlier files include the first corpus's files.

Usage: python tests/corpus/speed2/tools/collect_speed2.py [--mirror DIR]
"""

from __future__ import annotations

import sys
from pathlib import Path

SPEED2 = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(SPEED2.parent / "speed" / "tools"))
import collect_speed  # noqa: E402

collect_speed.SPEED = SPEED2
collect_speed._MANIFEST_HEADER = (
    "# Every file of the second speed corpus (README.md). Written by tools/collect_speed2.py.\n")
collect_speed._HEADER = (
    "# Every candidate repository the second speed corpus's rule (README.md) considered, in\n"
    "# order, and what happened to it. Outcomes written by tools/collect_speed2.py.\n")

part_of = collect_speed.part_of
excluded_repositories = collect_speed.excluded_repositories

if __name__ == "__main__":
    sys.exit(collect_speed.main())
