"""The markdown comment groups each package's prompts once, however many renders the
shortening's bisection makes (a grouping walks every prompt: 15 ms at 5,000, on one
core after the render pool is done)."""

from __future__ import annotations

import pytest

from promptops.review import markdown
from promptops.review.model import (
    ChangeItem,
    CheckStatus,
    Counts,
    FileDiff,
    PackageReview,
    PromptReview,
    RefInfo,
    ReviewReport,
)

PASSED = CheckStatus(status="passed")


def _prompt(i: int) -> PromptReview:
    own = FileDiff(old_path=f"prompts/p{i}.prompt.yaml", new_path=f"prompts/p{i}.prompt.yaml",
                   diff="".join(f"-old {i} {n}\n+new {i} {n}\n" for n in range(60)))
    partial = FileDiff(old_path="partials/p.j2", new_path="partials/p.j2", diff="-a\n+b")
    change = ChangeItem(kind="template_changed", level="patch", prompt=f"p{i}",
                        argument=None, message="text changed", new=["partials/p.j2"])
    return PromptReview(name=f"p{i}", old_name=None, level="patch", changes=[change],
                        source_diffs=[partial] if i % 2 else [partial, own], rendered=[],
                        cases_rendered=1, rendered_changed=False)


def _report() -> ReviewReport:
    prompts = [_prompt(i) for i in range(40)]
    package = PackageReview(
        path=".", name="demo", status="changed", base_version="1.0.0", head_version="1.0.1",
        required_bump="patch", version_ok=True, suggested_version="1.0.1", lint=PASSED,
        tests=PASSED, counts=Counts(added=0, removed=0, renamed=0, changed=40, unaffected=0),
        breaking=[], changes=[c for p in prompts for c in p.changes], added=[], removed=[],
        renamed=[], prompts=prompts, unaffected=[])
    return ReviewReport(base=RefInfo(spec="main", commit="a" * 40),
                        head=RefInfo(spec="HEAD", commit=None), packages=[package])


def test_a_shortened_comment_groups_each_package_once(monkeypatch: pytest.MonkeyPatch) -> None:
    report = _report()
    whole = markdown.to_markdown(report, budget=None)
    cut = markdown.to_markdown(report, budget=9_000)
    calls: list[PackageReview] = []
    grouped = markdown._grouped

    def counted(p: PackageReview) -> markdown.Grouped:
        calls.append(p)
        return grouped(p)

    monkeypatch.setattr(markdown, "_grouped", counted)
    assert markdown.to_markdown(report, budget=9_000) == cut
    assert "cut to fit" in cut and len(cut) <= 9_000 < len(whole)
    assert calls == report.packages  # once, though the bisection rendered many times
    own, through = whole.split("#### Changed only through the templates above")
    assert "`p1`" in through and "`p0`" not in through  # p1 has no source diff of its own
    assert "##### `p0`" in own and "##### `p1`" not in own
