"""Issue 16's review at scale, minus the clock: a generated package (benchmarks/genpkg.py,
the one benchmarks/diff_bench.py times at 5,000 prompts) with one edited shared partial.

Large enough that the review renders in its process pool (over the test runner's
threshold), and checks what the acceptance asks of the comment: the partial's source
diff, a rendered diff with "and N more prompts that include it", exact counts, both
gates, within GitHub's limit (the script itself runs in tests/test_benchmarks_smoke.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from helpers.repo import REPO_ROOT

from promptops.review import build_report, to_markdown
from promptops.review.markdown import DEFAULT_BUDGET

sys.path.insert(0, str(REPO_ROOT / "benchmarks"))
import diff_bench

N = 800  # 800 prompts: 2,400 renders and test cases, over the pool's threshold of 2,000


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return diff_bench.make_package(N, tmp_path_factory.mktemp("scale"))


def test_one_partial_edit_shows_its_source_and_a_rendered_diff(
        package: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(package)
    report = build_report(package, "HEAD~1", "HEAD", None)
    pkg = report.packages[0]
    assert (pkg.counts.changed, pkg.counts.unaffected, pkg.counts.added) == (N, 0, 0)
    assert len(pkg.prompts) == N and all(p.rendered_changed for p in pkg.prompts)
    assert pkg.tests.status == "passed" and pkg.tests.detail == f"{N} passed, 0 failed"
    assert pkg.lint.status == "passed"
    md = to_markdown(report)
    assert len(md) <= DEFAULT_BUDGET
    assert "##### `partials/rules.j2`: reaches 800 changed prompts" in md
    assert "+++ HEAD: partials/rules.j2" in md and "+Cite your sources." in md
    assert "Rendered diff of `task_00000`" in md and "+++ HEAD: smoke" in md
    assert f"and {N - 1} more prompts that include it" in md
    assert "more diff lines cut" not in md  # the budget went to what matters
