"""Where a `promptops diff` spends its CPU, phase by phase (issue 26).

Runs the review in this process on a package made by ``diff_shapes.py --keep DIR``
(``DIR/<shape>``: branch ``change`` checked out, ``main`` before the edit), lint's cache
removed first, with a timer around each phase's function: both ends' validation (BASE by
its commit, HEAD ``None`` for the working tree), the bundles, the diff engine, the test
plan and argument sets, the lint gate (in this process, or in the child
``promptops/review/early.py`` forks: then it is in the children's figure), the render pool
(this process's share), the per-prompt diffs, and the report's formatting. "children" is
the render workers, the lint child and git. Timers nest: a phase includes the phases it
calls (``_compared`` holds ``render_all`` and ``_prompt``).

Usage: python benchmarks/diff_phases.py DIR/SHAPE [HEAD_REVISION|-]   ("-": the working
       tree, as ``diff main --format markdown``; a revision: text output, as ``diff main change``)
       PYTHONPATH=<another checkout> measures that checkout.
"""

from __future__ import annotations

import functools
import os
import resource
import shutil
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

CPU: dict[str, float] = defaultdict(float)
WALL: dict[str, float] = defaultdict(float)


def _timed(label: str, f: Callable[..., object]) -> Callable[..., object]:
    @functools.wraps(f)
    def timed(*a: object, **k: object) -> object:
        c, w = time.process_time(), time.perf_counter()
        try:
            return f(*a, **k)
        finally:
            CPU[label] += time.process_time() - c
            WALL[label] += time.perf_counter() - w
    return timed


def main() -> None:
    pkg = Path(sys.argv[1]).resolve()
    head = sys.argv[2] if len(sys.argv) > 2 and sys.argv[2] != "-" else None
    os.chdir(pkg)
    shutil.rmtree(pkg / ".git" / "promptops", ignore_errors=True)
    c0, w0 = time.process_time(), time.perf_counter()
    from promptops.console import Console
    from promptops.pipeline import build as pb
    from promptops.pipeline import bundle as pbu
    from promptops.pipeline import validate as pv
    from promptops.review import build as rb
    from promptops.review import build_report, gates, to_markdown, to_text
    from promptops.review import shared as rs

    try:
        from promptops.review import warm as rw
    except ImportError:  # a checkout from before review/warm.py (PYTHONPATH=<older>)
        rw = None

    CPU["imports"] = time.process_time() - c0
    for mod, name, label in (
            (pv, "validate", "validation (both ends)"), (pbu, "compile_bundle", "bundles"),
            (rb, "diff_bundles", "diff engine"), (rb, "cases_for", "argument sets"),
            (gates, "test_plan", "test plan"), (gates, "lint_status", "lint (this process)"),
            (rs.Shared, "same_render", "unaffected proof"),
            (rs.Shared, "render_all", "render_all (this process)"),
            (rb, "_prompt", "per-prompt diffs"), (rb, "_compared", "_compared")):
        setattr(mod, name, _timed(label, getattr(mod, name)))
    if rw is not None:  # HEAD's prompt files validated on two cores before its build
        for mod, name, label in ((rw, "validate_some", "prevalidation (this process's half)"),
                                 (rb, "prevalidate", "prevalidation (in all, this process)")):
            setattr(mod, name, _timed(label, getattr(mod, name)))
    prop = pb.Build.__dict__["validated"]
    real = prop.func  # type: ignore[attr-defined]

    def validated(self: pb.Build) -> object:
        return _timed(f"validation of {self.ref or 'the working tree'}", real)(self)

    prop.func = validated
    c1, w1 = time.process_time(), time.perf_counter()
    report = build_report(pkg, "main", head, None)
    CPU["build_report"], WALL["build_report"] = time.process_time() - c1, time.perf_counter() - w1
    c2 = time.process_time()
    out = to_markdown(report) if head is None else to_text(report, Console())
    CPU["formatting"] = time.process_time() - c2
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU["children (workers, lint child, git)"] = kids.ru_utime + kids.ru_stime
    print(f"load average: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("| phase | CPU s | wall s |\n| --- | --- | --- |")
    for label in sorted(CPU, key=lambda k: -CPU[k]):
        print(f"| {label} | {CPU[label]:.2f} | {WALL.get(label, 0.0):.2f} |")
    total = time.process_time() - c0 + CPU["children (workers, lint child, git)"]
    print(f"| **all processes** | {total:.2f} | {time.perf_counter() - w0:.2f} |")
    print(f"output: {len(out)} characters")


if __name__ == "__main__":
    main()
