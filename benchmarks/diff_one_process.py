"""The CPU of a whole `promptops diff` with every phase in this one process (issue 26).

The multi-process review's CPU moves with the machine's load and the pool's scheduling;
run in one process (``os.cpu_count`` patched to 1: no render pool, no lint or
prevalidation child), the same work is counted without that noise, so two checkouts can
be compared on a shared machine. Runs ``build_report`` + ``to_markdown`` (as ``diff main
--format markdown``) on a package made by ``diff_shapes.py --keep DIR`` (``DIR/<shape>``),
lint's cache removed first, and prints the CPU seconds, imports included, and the
report's length.

Usage: PYTHONPATH=<checkout> python benchmarks/diff_one_process.py DIR/SHAPE
       (run each checkout in turn, interleaved, on a copy of the package no other
       benchmark is using: lint's cache lives in it)
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path


def main() -> None:
    pkg = Path(sys.argv[1]).resolve()
    os.chdir(pkg)
    shutil.rmtree(pkg / ".git" / "promptops", ignore_errors=True)
    os.cpu_count = lambda: 1  # every phase here: no pool, no forked children
    start = time.process_time()
    from promptops.review import build_report, to_markdown

    text = to_markdown(build_report(pkg, "main", None, None))
    print(f"cpu {time.process_time() - start:.2f} s, report {len(text)} characters")


if __name__ == "__main__":
    main()
