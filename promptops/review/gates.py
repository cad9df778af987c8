"""Lint and test status at HEAD for the review summary.

A reviewer should see at a glance whether the change passes the gates, but the review
must never fail because a gate cannot run: such a gate is reported as
``not_available`` with the reason (the exception's type and message), never raised.
The tests run with CI semantics and never write snapshots: a review is read-only.

Both gates reuse what the review already has. Lint goes through lint's own entry
(:func:`promptops.lint.runner.lint_package`) on the HEAD build the review loaded, so it
validates nothing twice and answers a commit linted before from lint's cache. The test
gate is :func:`promptops.testing.suite.run_suite` taken apart: :func:`test_plan` is its
cases and snapshot policy, the review runs each case with the HEAD renderer that already
compiled the prompt's templates for the rendered diff, and :func:`test_verdict` is its
summary (``tests/review/test_review_gates.py`` checks the verdict equals run_suite's).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from promptops.review.model import CheckStatus

if TYPE_CHECKING:
    from promptops.pipeline.build import Build
    from promptops.pipeline.validate import Package
    from promptops.testing.cases import Case
    from promptops.testing.runner import Outcome, SnapshotPolicy

__all__ = ["CheckStatus", "TestPlan", "lint_status", "test_plan", "test_verdict"]

NO_HEAD = CheckStatus(status="not_available", detail="no package at HEAD")


def _unavailable(exc: Exception) -> CheckStatus:
    return CheckStatus(status="not_available", detail=f"{type(exc).__name__}: {exc}"[:300])


def lint_status(build: Build | None) -> CheckStatus:
    """Lint at HEAD with the manifest's settings, as ``promptops lint`` would."""
    if build is None:
        return NO_HEAD
    try:
        from promptops.lint.runner import lint_package

        findings = lint_package(build).findings
    except Exception as exc:  # a gate that cannot run must not stop the review
        return _unavailable(exc)
    errors = sum(1 for f in findings if f.level == "error")
    detail = f"{errors} errors, {len(findings) - errors} warnings"
    return CheckStatus(status="failed" if errors else "passed", detail=detail)


@dataclass(frozen=True)
class TestPlan:
    """What ``run_suite(build, writable=False)`` runs: every case, and the snapshots as
    the revision holds them (never written)."""

    __test__ = False  # not a pytest class

    package: Package
    cases: list[Case]
    policy: SnapshotPolicy


def test_plan(build: Build | None) -> TestPlan | CheckStatus:
    """The test gate's cases, or the status saying why the gate cannot run."""
    if build is None:
        return NO_HEAD
    try:
        from promptops.testing import snapshots
        from promptops.testing.runner import SnapshotPolicy
        from promptops.testing.suite import all_cases

        package, source = build.package, build.source
        cases = all_cases(package, source, build.bundle)
        existing = snapshots.snapshot_files(package.files)
        policy = SnapshotPolicy(stored=snapshots.stored(source, existing, cases),
                                writable=False)
    except Exception as exc:  # a gate that cannot run must not stop the review
        return _unavailable(exc)
    return TestPlan(package, cases, policy)


def test_verdict(plan: TestPlan, outcomes: list[Outcome]) -> CheckStatus:
    """The gate's status from one outcome per case of ``plan``, as run_suite words it."""
    from promptops.testing.snapshots import SnapshotReport
    from promptops.testing.suite import SuiteResult

    result = SuiteResult(plan.package, plan.cases, outcomes, SnapshotReport(), 0.0)
    return CheckStatus(status="passed" if result.ok else "failed", detail=result.summary())
