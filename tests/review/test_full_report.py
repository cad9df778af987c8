"""A shortened PR comment links to the whole report, which `--full-report` writes uncut."""

from __future__ import annotations

from pathlib import Path

from helpers.repo import make_repo, run_cli

from promptops.review.markdown import COMMENT_LIMIT


def _big(word: str) -> str:
    return "".join(f"line {i:05d}: {word} the quick brown fox jumps over the lazy dog\n"
                   for i in range(4000))


def test_full_report_is_uncut_and_the_comment_links_to_it(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {
        "promptops.yaml": "name: big\nversion: 1.0.0\n",
        "prompts/big.prompt.yaml": "messages:\n  - role: user\n    template: t/big.j2\n",
        "t/big.j2": _big("old")})
    (tmp_path / "r" / "t" / "big.j2").write_text(_big("new"))
    repo.git.commit("-qam", "rewrite")
    comment, full = tmp_path / "comment.md", tmp_path / "full.md"
    done = run_cli("diff", "HEAD~1", "HEAD", "--format", "markdown", "-o", str(comment),
                   "--full-report", str(full), "--full-report-url", "https://ci.example/42",
                   cwd=tmp_path / "r")
    assert done.returncode == 0, done.stderr
    text, whole = comment.read_text(), full.read_text()
    assert len(text) <= COMMENT_LIMIT < len(whole)
    assert "the full report is [https://ci.example/42](https://ci.example/42)" in text
    assert "+line 03999: new" in whole and "cut to fit" not in whole
    assert "-line 00000: old" in text  # the template's own diff is never cut to nothing
