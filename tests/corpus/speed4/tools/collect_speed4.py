"""Apply the fourth speed corpus's rule (../README.md) with the first corpus's collector.

Why reuse: the rule's points 2, 3, 5, 6 and 8 are the earlier speed corpora's, so the
decisions must be made by the very same code (tests/corpus/speed/tools/collect_speed.py);
only the directory differs. The exclusion list is every ``repository:`` under tests/ and
benchmarks/ outside this directory, so it holds the three earlier speed corpora's manifests
and candidate lists, as this rule's point 1 asks; the earlier files (byte-identical copies)
include the three earlier corpora's files.

Usage: python tests/corpus/speed4/tools/collect_speed4.py [--mirror DIR]
"""

from __future__ import annotations

import sys
from pathlib import Path

SPEED4 = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(SPEED4.parent / "speed" / "tools"))
import collect_speed  # noqa: E402

part_of = collect_speed.part_of


def excluded_repositories() -> set[str]:
    """Rule point 1: every repository named under tests/ or benchmarks/ outside speed4."""
    return collect_speed.excluded_repositories(own=SPEED4)


def main() -> None:
    """The first corpus's collector run on this directory. Its module globals are pointed
    here only when run as a script, so importing this module leaves the first corpus's
    collector untouched."""
    collect_speed.SPEED = SPEED4
    collect_speed._MANIFEST_HEADER = (
        "# Every file of the fourth speed corpus (README.md). "
        "Written by tools/collect_speed4.py.\n")
    collect_speed._HEADER = (
        "# Every candidate repository the fourth speed corpus's rule (README.md) considered,"
        " in\n# order, and what happened to it. Outcomes written by tools/collect_speed4.py.\n")
    collect_speed.main()


if __name__ == "__main__":
    main()
