"""docs/review.md shows a real report: regenerating it must change nothing."""

from __future__ import annotations

import subprocess

from helpers.repo import PYTHON, REPO_ROOT, cli_env


def test_review_doc_example_and_schema_are_current() -> None:
    done = subprocess.run([PYTHON, str(REPO_ROOT / "docs" / "gen_review_example.py"), "--check"],
                          cwd=REPO_ROOT, env=cli_env(), capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    doc = (REPO_ROOT / "docs" / "review.md").read_text(encoding="utf-8")
    assert "## promptops review: `main (merge base)` → `feature`" in doc
    assert "##### `explain_diagram` (renamed from `describe_diagram`)" in doc
