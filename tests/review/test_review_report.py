"""`promptops diff` on real repositories: the starter package, then a feature branch
with a partial edit, an argument removal and a rename (see review_helpers)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import git
import jsonschema
import pytest
from helpers.repo import REPO_ROOT, run_cli
from review_helpers import GOLDEN, feature_change, fixed_commit, fixed_repo, starter_files

from promptops.review import build_report, json_schema, to_markdown, to_text
from promptops.review.model import CheckStatus, PackageReview, ReviewReport

SCHEMA_FILE = REPO_ROOT / "docs" / "review.schema.json"


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> git.Repo:
    files = starter_files()
    repo = fixed_repo(tmp_path_factory.mktemp("review") / "repo", files)
    repo.git.checkout("-q", "-b", "feature")
    fixed_commit(repo, feature_change(files), "feature: shorter house style, drop type", 1)
    return repo


@pytest.fixture(scope="module")
def report(scenario: git.Repo) -> ReviewReport:
    return build_report(Path(scenario.working_tree_dir or "."), "main...feature", None, None)


def _pkg(report: ReviewReport) -> PackageReview:
    assert [p.path for p in report.packages] == ["."]
    return report.packages[0]


def _prompt(report: ReviewReport, name: str) -> Any:
    return next(p for p in _pkg(report).prompts if p.name == name)


def run_diff(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli("diff", *args, cwd=cwd)


def test_partial_edit_shows_rendered_diff_in_every_dependent_prompt(report: ReviewReport) -> None:
    for name in ("code_review", "summarize_diff"):  # both include partials/house_style.j2
        pr = _prompt(report, name)
        assert pr.rendered_changed and pr.rendered
        assert any(r.smoke for r in pr.rendered)
        for r in pr.rendered:
            assert "-Answer in Markdown. Keep it short: at most ten findings" in r.diff
            assert "+Answer in Markdown. Keep it short: at most five findings" in r.diff
        assert [d.new_path for d in pr.source_diffs] == ["partials/house_style.j2"]
    # every case that renders reaches the partial; the two expected-error cases do not
    assert {r.case for r in _prompt(report, "code_review").rendered} == {
        "python by default", "focus only when given", "go_snapshot", "smoke"}
    assert _prompt(report, "code_review").cases_rendered == 6
    # roles are kept in the rendered form
    diff = _prompt(report, "summarize_diff").rendered[0].diff
    assert "=== message 2 · user · resource ===" in diff  # numbered from 1


def test_argument_removal_is_breaking_and_needs_a_major_bump(report: ReviewReport) -> None:
    pkg = _pkg(report)
    removed = [c for c in pkg.breaking if c.kind == "argument_removed"]
    assert [(c.prompt, c.argument) for c in removed] == [("commit_message", "type")]
    assert pkg.breaking[0].level == "major"
    assert pkg.required_bump == "major"
    assert (pkg.base_version, pkg.head_version) == ("0.1.0", "0.1.0")
    assert pkg.version_ok is False and pkg.suggested_version == "0.2.0"
    assert _prompt(report, "commit_message").level == "major"
    md = to_markdown(report)
    assert md.index("Breaking changes") < md.index("Changed prompts")
    assert "- `commit_message`: argument 'type' removed" in md
    assert "**major** ⚠️ too small (needs ≥ 0.2.0)" in md


def test_rename_is_shown_as_a_rename(report: ReviewReport) -> None:
    pkg = _pkg(report)
    assert [(r.old, r.new) for r in pkg.renamed] == [("describe_diagram", "explain_diagram")]
    assert pkg.added == [] and pkg.removed == []
    assert _prompt(report, "explain_diagram").old_name == "describe_diagram"
    md = to_markdown(report)
    assert "##### `explain_diagram` (renamed from `describe_diagram`)" in md
    assert "1 renamed (`describe_diagram` → `explain_diagram`)" in md


def test_unchanged_prompts_are_listed_as_unaffected(report: ReviewReport) -> None:
    pkg = _pkg(report)
    assert pkg.unaffected == ["explain_error"]
    assert "explain_error" not in {p.name for p in pkg.prompts}
    assert pkg.counts.unaffected == 1 and pkg.counts.changed == 3
    assert "#### Unaffected prompts" in to_markdown(report)


def test_markdown_matches_the_golden_file(report: ReviewReport) -> None:
    """The whole comment, byte for byte. Lint and test results come from other
    subsystems whose rules evolve, so they are pinned here to keep this about the review."""
    golden = GOLDEN / "feature.md"
    gate = CheckStatus(status="failed", detail="1 errors, 2 warnings")
    pinned = report.model_copy(update={"packages": [
        p.model_copy(update={"lint": gate, "tests": gate}) for p in report.packages]})
    text = to_markdown(pinned)
    if os.environ.get("PROMPTOPS_UPDATE_GOLDEN"):
        golden.write_text(text, encoding="utf-8")
    assert text == golden.read_text(encoding="utf-8"), (
        "markdown report changed; inspect it and rerun with PROMPTOPS_UPDATE_GOLDEN=1"
    )


def test_json_validates_against_the_published_schema(report: ReviewReport) -> None:
    published = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    assert published == json_schema(), "docs/review.schema.json is stale: run " \
        "`python docs/gen_review_example.py` to regenerate it"
    data = json.loads(report.model_dump_json())
    jsonschema.Draft202012Validator(published).validate(data)
    assert data["format"] == "promptops.review/1"
    broken = dict(data, packages=[dict(data["packages"][0], status="exploded")])
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(published).validate(broken)


def test_text_report_has_the_same_facts(report: ReviewReport) -> None:
    text = to_text(report)
    assert "describe_diagram -> explain_diagram" in text
    assert "commit_message: argument 'type' removed" in text
    assert "unaffected (rendered output unchanged): explain_error" in text
    assert "\x1b[" not in text  # colour only on a terminal or with --color always


def test_cli_markdown_output_file_and_fail_on(scenario: git.Repo, tmp_path: Path) -> None:
    cwd = Path(scenario.working_tree_dir or ".")
    out = tmp_path / "review.md"
    done = run_diff(cwd, "main...feature", ".", "--format", "markdown", "--output", str(out))
    assert done.returncode == 0, done.stderr
    assert out.read_text(encoding="utf-8").startswith("## promptops review: `main (merge base)`")
    assert run_diff(cwd, "main", "feature", "--fail-on", "breaking").returncode == 1
    assert run_diff(cwd, "main", "main", "--fail-on", "any").returncode == 0
    same = run_diff(cwd, "main..main", "--format", "json")
    assert same.returncode == 0, same.stderr
    assert json.loads(same.stdout)["packages"][0]["status"] == "unchanged"
    bad = run_diff(cwd, "no-such-branch")
    assert bad.returncode == 2 and "unknown revision 'no-such-branch'" in bad.stderr


def test_working_tree_is_the_default_head(tmp_path: Path) -> None:
    files = starter_files()
    repo = fixed_repo(tmp_path / "wt", files)
    root = Path(repo.working_tree_dir or ".")
    (root / "partials" / "reviewer_persona.j2").write_text("I am a terse reviewer.\n")
    done = run_diff(root, "HEAD", "--format", "json", "--fail-on", "any")
    assert done.returncode == 1, done.stderr
    data = json.loads(done.stdout)
    assert data["head"] == {"spec": "working tree", "commit": None}
    pkg = data["packages"][0]
    assert [p["name"] for p in pkg["prompts"]] == ["code_review"]
    assert "+I am a terse reviewer." in pkg["prompts"][0]["rendered"][0]["diff"]
    assert pkg["required_bump"] == "patch"
