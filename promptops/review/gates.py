"""Lint and test status at HEAD for the review summary.

A reviewer should see at a glance whether the change passes the gates, but the review
must never fail because a gate cannot run: such a gate is reported as
``not_available`` with the reason (the exception's type and message), never raised.
The tests run with CI semantics and never write snapshots: a review is read-only.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from promptops.pipeline.source import MANIFEST, Source
from promptops.review.model import CheckStatus

if TYPE_CHECKING:
    from promptops.pipeline.build import Build

__all__ = ["CheckStatus", "lint_status", "test_status"]


def _unavailable(exc: Exception) -> CheckStatus:
    return CheckStatus(status="not_available", detail=f"{type(exc).__name__}: {exc}"[:300])


def lint_status(source: Source | None) -> CheckStatus:
    if source is None:
        return CheckStatus(status="not_available", detail="no package at HEAD")
    try:
        import yaml

        from promptops.lint.config import settings
        from promptops.lint.engine import lint_source

        data = yaml.safe_load(source.read(MANIFEST))
        findings = lint_source(source, settings(data, [], []), None).findings
    except Exception as exc:  # a gate that cannot run must not stop the review
        return _unavailable(exc)
    errors = sum(1 for f in findings if f.level == "error")
    detail = f"{errors} errors, {len(findings) - errors} warnings"
    return CheckStatus(status="failed" if errors else "passed", detail=detail)


def test_status(source: Source | None, package_dir: Path | None = None,
                build: Build | None = None) -> CheckStatus:
    if source is None or package_dir is None:
        return CheckStatus(status="not_available", detail="no package at HEAD")
    try:
        from promptops.pipeline.build import Build
        from promptops.testing.suite import run_suite

        # Read-only (a review writes no snapshot); the source given is what is read, so
        # the working tree is tested when HEAD is the working tree.
        if build is None:
            build = Build(package_dir, source=source)
        result = run_suite(build, writable=False, jobs=None)
    except Exception as exc:  # a gate that cannot run must not stop the review
        return _unavailable(exc)
    return CheckStatus(status="passed" if result.ok else "failed", detail=result.summary())
