"""The review comment of a breaking change (issue 24, items 1-4): a required argument
added, an enum value removed and a system message edited, on a real repository.

What a reviewer must see: both ends of every rendered diff as prompt text (each end
rendered with the arguments it accepts, the adaptation said in one line), one 1-based
message numbering in the change table and the rendered diff, a system message labelled
as authored and as served, and how to fix a bump that is too small.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from review_helpers import (
    GOLDEN,
    breaking_base,
    breaking_change,
    fixed_commit,
    fixed_repo,
    starter_files,
)

from promptops.review import build_report, to_markdown
from promptops.review.model import CheckStatus, ReviewReport


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> ReviewReport:
    files = starter_files()
    files.update(breaking_base(files))
    repo = fixed_repo(tmp_path_factory.mktemp("breaking") / "repo", files)
    repo.git.checkout("-q", "-b", "feature")
    fixed_commit(repo, breaking_change(), "feature: scope required, no chore, terse", 1)
    return build_report(Path(repo.working_tree_dir or "."), "main...feature", None, None)


def pinned_markdown(report: ReviewReport) -> str:
    """The comment with the lint and test gates pinned (their rules evolve elsewhere)."""
    gate = CheckStatus(status="failed", detail="1 errors, 2 warnings")
    pinned = report.model_copy(update={"packages": [
        p.model_copy(update={"lint": gate, "tests": gate}) for p in report.packages]})
    return to_markdown(pinned)


def _rendered_diffs(md: str) -> list[str]:
    return re.findall(r"```diff\n(--- main \(merge base\): (?!prompts/|partials/).*?)\n```",
                      md, re.S)


def test_both_ends_of_every_rendered_diff_are_prompt_text(report: ReviewReport) -> None:
    md = pinned_markdown(report)
    diffs = _rendered_diffs(md)
    assert len(diffs) >= 3  # the fix case, the deleted chore case, the smoke case
    for diff in diffs:
        body = [line for line in diff.splitlines()[2:] if not line.startswith("@@")]
        assert not any(line[1:].startswith("error ") for line in body), diff
        assert any(line.startswith("-") for line in body), diff
        assert any(line.startswith("+") for line in body), diff
    prompt = next(p for p in report.packages[0].prompts if p.name == "commit_message")
    by_case = {r.case: r for r in prompt.rendered}
    # HEAD's case names scope, which BASE does not declare: BASE renders without it
    assert by_case["a fix"].base_arguments == [
        "without 'scope' (not declared at this end)"]
    # a test only BASE had uses chore, which HEAD's enum no longer has, and lacks scope
    assert by_case["a chore"].head_arguments == [
        "without 'type' ('chore' is not in its enum at this end)",
        "scope='example scope' (required only at this end: its smoke value)"]
    assert "Rendered at `main (merge base)` without 'scope' (not declared at this end)." in md


def test_one_message_numbering_and_cells_that_show_the_change(report: ReviewReport) -> None:
    md = pinned_markdown(report)
    row = next(line for line in md.splitlines() if "template text changed" in line)
    assert "message 1" in row and "message 2" in row
    assert "message 1: You write commit messages in the Conventional" in row
    assert "message 1: You write terse commit messages" in row
    assert "message 2: Write a {{ type }} commit message (subject" in row
    assert "message 2: Write a {{ type }} commit message for {{ scope }}" in row
    # the rendered diff counts the same way: the system message is message 1
    assert "=== message 1 · system (served as user) · text ===" in md
    assert "=== message 2 · user · text ===" in md
    assert "=== message 0" not in md


def test_a_too_small_bump_says_how_to_fix_it(report: ReviewReport) -> None:
    md = pinned_markdown(report)
    assert "**To fix:** run `promptops bump auto` (sets 0.2.0) and commit `promptops.yaml`." in md


def test_the_breaking_comment_matches_the_golden_file(report: ReviewReport) -> None:
    golden = GOLDEN / "breaking.md"
    text = pinned_markdown(report)
    if os.environ.get("PROMPTOPS_UPDATE_GOLDEN"):
        golden.write_text(text, encoding="utf-8")
    assert text == golden.read_text(encoding="utf-8"), (
        "markdown report changed; inspect it and rerun with PROMPTOPS_UPDATE_GOLDEN=1")
