"""Report size limits and multi-package repositories, on real git repositories."""

from __future__ import annotations

import json
from pathlib import Path

from review_helpers import fixed_commit, fixed_repo, starter_files

from promptops.review import COMMENT_LIMIT, build_report, to_markdown, to_text

MANIFEST = "name: {name}\nversion: 1.0.0\n"


def _prompt(text: str, args: str = "") -> str:
    return f"{args}messages:\n  - role: user\n    template: templates/{text}\n"


def _big(seed: str, lines: int) -> str:
    return "".join(f"line {i:05d}: {seed} the quick brown fox jumps over the lazy dog\n"
                   for i in range(lines))


def test_huge_change_is_truncated_under_the_comment_limit(tmp_path: Path) -> None:
    base = {
        "promptops.yaml": MANIFEST.format(name="huge"),
        "prompts/big.prompt.yaml": _prompt("big.j2"),
        "prompts/other.prompt.yaml": _prompt("other.j2"),
        "prompts/small.prompt.yaml": "messages:\n  - role: user\n    text: hello\n",
        "templates/big.j2": _big("old", 4000),
        "templates/other.j2": _big("before", 800),
    }
    repo = fixed_repo(tmp_path / "huge", base)
    fixed_commit(repo, {"templates/big.j2": _big("new", 4000),
                        "templates/other.j2": _big("after", 800)}, "rewrite", 1)
    report = build_report(tmp_path / "huge", "HEAD~1", "HEAD", None)
    full = report.packages[0]
    assert sum(len(d.diff) for p in full.prompts for d in p.source_diffs) > 4 * COMMENT_LIMIT
    md = to_markdown(report)
    assert len(md) <= COMMENT_LIMIT
    assert "more diff lines cut to fit GitHub's comment limit" in md
    # the summary and the tables survive; both big prompts keep a part of their diff
    assert "| `huge` (`.`) | changed |" in md
    # each changed template once, with what it reaches; both keep a part of their diff
    assert "##### `templates/big.j2`: reaches 1 changed prompt" in md
    assert "##### `templates/other.j2`: reaches 1 changed prompt" in md
    assert "-line 00000: old the quick" in md and "-line 00000: before the quick" in md
    assert "##### `big`: patch" in md and "##### `other`: patch" in md
    assert "Also changed through `templates/big.j2` (diff above)." in md
    assert md.count("<details>") == md.count("</details>")
    assert md.count("````") % 2 == 0 and "`small`" in md
    assert md.rstrip().endswith("This comment is shortened; `--format json` has them all.</sub>")
    # json and text are never cut
    assert "line 03999: new" in report.model_dump_json()
    assert "line 03999: new" in to_text(report)
    # an explicit smaller budget is honoured too
    assert len(to_markdown(report, budget=5_000)) <= 5_000


def _pkg(name: str, greeting: str) -> dict[str, str | bytes | None]:
    return {
        f"{name}/promptops.yaml": MANIFEST.format(name=name),
        f"{name}/prompts/hi.prompt.yaml": f"messages:\n  - role: user\n    text: {greeting}\n",
    }


def test_several_packages_report_only_the_touched_ones(tmp_path: Path) -> None:
    files = {**_pkg("alpha", "hi"), **_pkg("beta", "hello"), "README.md": "two packages\n"}
    files.update(starter_files("nested/starter/"))
    repo = fixed_repo(tmp_path / "multi", files)
    root = tmp_path / "multi"
    fixed_commit(repo, {"alpha/prompts/hi.prompt.yaml":
                        "messages:\n  - role: user\n    text: hi there\n"}, "alpha", 1)
    report = build_report(root, "HEAD~1", "HEAD", None)
    assert [p.path for p in report.packages] == ["alpha"]
    assert report.packages[0].prompts[0].rendered[0].diff.endswith("-hi\n+hi there")

    fixed_commit(repo, {"README.md": "docs only\n"}, "docs", 2)
    assert build_report(root, "HEAD~1", "HEAD", None).packages == []
    assert "No prompt package was touched" in to_markdown(
        build_report(root, "HEAD~1", "HEAD", None))

    fixed_commit(repo, {"beta/prompts/hi.prompt.yaml": None, "beta/promptops.yaml": None,
                        **_pkg("gamma", "hey"),
                        "nested/starter/partials/house_style.j2": "Be brief.\n"}, "more", 3)
    report = build_report(root, "HEAD~1", None, None)  # the working tree equals HEAD here
    by_path = {p.path: p for p in report.packages}
    assert sorted(by_path) == ["beta", "gamma", "nested/starter"]
    assert by_path["beta"].status == "removed" and by_path["beta"].removed == ["hi"]
    assert by_path["gamma"].status == "added" and by_path["gamma"].added == ["hi"]
    assert by_path["nested/starter"].status == "changed"
    assert report.breaking  # a removed package breaks its callers
    # PATH picks one package whatever else changed
    one = build_report(root, "HEAD~1", None, root / "gamma")
    assert [p.path for p in one.packages] == ["gamma"]
    data = json.loads(report.model_dump_json())
    assert {p["status"] for p in data["packages"]} == {"removed", "added", "changed"}


def test_a_package_that_does_not_load_is_reported_invalid(tmp_path: Path) -> None:
    repo = fixed_repo(tmp_path / "bad", {"promptops.yaml": MANIFEST.format(name="bad"),
                                         "prompts/p.prompt.yaml": "messages: []\n"})
    fixed_commit(repo, {"prompts/p.prompt.yaml": "messages: [\n"}, "break it", 1)
    report = build_report(tmp_path / "bad", "HEAD~1", "HEAD", None)
    pkg = report.packages[0]
    assert pkg.status == "invalid" and pkg.error and "prompts/p.prompt.yaml" in pkg.error
    assert "does not load" in to_markdown(report)
