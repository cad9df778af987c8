"""A whole test run: source -> package -> bundle -> cases -> outcomes -> snapshots.

`promptops test`, `promptops check` and the release gate all come through
:func:`run_suite`, so the three cannot disagree about what passes.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from promptops.errors import UsageError
from promptops.pipeline.build import Build
from promptops.pipeline.bundle_types import Bundle
from promptops.pipeline.source import Source
from promptops.pipeline.validate import Package
from promptops.testing import snapshots
from promptops.testing.cases import Case, load_cases, select, smoke_cases
from promptops.testing.runner import Outcome, SnapshotPolicy, auto_jobs, run_cases


@dataclass
class SuiteResult:
    package: Package
    cases: list[Case]  # the selected cases, in run order
    outcomes: list[Outcome]  # one per case
    snapshots: snapshots.SnapshotReport
    seconds: float

    def count(self, status: str) -> int:
        return sum(1 for o in self.outcomes if o.status == status)

    @property
    def ok(self) -> bool:
        return all(o.status in ("passed", "skipped") for o in self.outcomes)

    def summary(self) -> str:
        """The closing line: `N passed, N failed`, then skipped/errors only when non-zero."""
        line = f"{self.count('passed')} passed, {self.count('failed')} failed"
        for status, label in (("skipped", "skipped"), ("error", "errors")):
            if self.count(status):
                line += f", {self.count(status)} {label}"
        return line


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def all_cases(package: Package, source: Source, bundle: Bundle) -> list[Case]:
    """The test files' cases in file order, then one smoke case per prompt."""
    return load_cases(package, source) + smoke_cases(package, bundle)


def run_suite(
    build: Build,
    *,
    patterns: list[str] | None = None,
    update: bool = False,
    jobs: int | None = None,
    progress: Callable[[int], Callable[[int], None]] | None = None,
    writable: bool | None = None,
    ci: bool | None = None,
    keep: Callable[[Case], bool] | None = None,
) -> SuiteResult:
    """Run the package's tests; ``progress(total)`` returns a callback told of finished cases.

    ``keep`` narrows the cases further (``test --watch`` re-runs what a save touched).
    Snapshots are written only for the working tree (``writable`` defaults to whether the
    build reads it); a commit's snapshots are read from the commit and never written.
    """
    writable = build.ref is None if writable is None else writable
    if update and not writable:
        raise UsageError("--update-snapshots writes the working tree; it cannot be combined "
                         "with --ref (snapshots are read from the commit there)")
    start = time.perf_counter()
    source, package, bundle = build.source, build.package, build.bundle
    everything = all_cases(package, source, bundle)
    chosen = select(everything, patterns or [])
    if keep is not None:  # `test --watch`: the cases a save touched
        chosen = [c for c in chosen if keep(c)]
    existing = snapshots.snapshot_files(package.files)
    policy = SnapshotPolicy(
        stored=snapshots.stored(source, existing, chosen),
        update=update,
        writable=writable,
        ci=in_ci() if ci is None else ci,
    )
    tick = progress(len(chosen)) if progress is not None else None
    outcomes = run_cases(bundle, chosen, policy, jobs or auto_jobs(len(chosen)), tick)
    root = Path(build.path).resolve() if writable else None
    report = snapshots.apply(root, chosen, outcomes, snapshots.obsolete(existing, everything),
                             update=update)
    return SuiteResult(package, chosen, outcomes, report, time.perf_counter() - start)


def release_gate(head: Build) -> str | None:
    """The release refusal when the committed tests fail at HEAD (snapshots from HEAD)."""
    result = run_suite(head)
    if result.ok:
        return None
    failing = [c.id for c, o in zip(result.cases, result.outcomes, strict=True)
               if o.status in ("failed", "error")]
    shown = ", ".join(failing[:3]) + (f" and {len(failing) - 3} more" if len(failing) > 3 else "")
    return (f"the prompt tests fail at HEAD ({result.summary()}: {shown}); run "
            "`promptops test --ref HEAD` to see why, fix, commit, and release again")
