"""Following several packages of one repository: a commit asks git for their trees once.

Each package's tree at a new commit decides whether it is served as it was; with 100
packages one ``git rev-parse`` each took ~0.5 s between a commit and its listeners. The
follower now asks ``git cat-file --batch-check`` once a repository and commit
(``refs.trees_of``, held to ``tree_of`` by tests/git/test_git_trees_of.py).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from follow_helpers import (  # noqa: F401  (fixtures)
    Recorder,
    follow_fixture,
    package,
    recorder_fixture,
    texts,
    user_cache_fixture,
)
from helpers.repo import commit_files, make_repo

from promptops.git import refs as gitrefs
from promptops.serve.follow import Follower

Follow = Callable[..., Follower]


def test_a_commit_asks_git_once_for_the_trees_of_all_packages(
    tmp_path: Path, follow: Follow, recorder: Recorder, monkeypatch: pytest.MonkeyPatch,
) -> None:
    files: dict[str, str | None] = {}
    for k in range(3):
        files.update(package({f"g{k}": f"Hi {k}"}, name=f"pkg{k}", at=f"p{k}/"))
    repo = make_repo(tmp_path / "mono", files)
    top = Path(repo.working_tree_dir or ".")
    dirs = [top / f"p{k}" for k in range(3)]
    follower = follow(dirs)
    first = follower.initial()
    calls: list[tuple[str, ...]] = []
    real = gitrefs._git

    def counted(repo: gitrefs.Repo, *args: str, stdin: str | None = None) -> str | None:
        calls.append(args)
        return real(repo, *args, stdin=stdin)

    monkeypatch.setattr(gitrefs, "_git", counted)
    follower.start(recorder.on_change)
    head = commit_files(repo, {"p1/prompts/g1.prompt.yaml": "description: d\n"
                               "messages:\n  - role: user\n    text: changed\n"})
    bundles = recorder.wait_change(head)
    assert [texts(b) for b in bundles] == [texts(first[0]), {"g1": "changed"},
                                           texts(first[2])]
    asked = [a for a in calls if a[:1] in (("rev-parse",), ("cat-file",))]
    assert len(asked) == 1 and asked[0][0] == "cat-file", calls
    assert [b["source"]["tree"] for b in bundles] == [
        gitrefs.tree_of(gitrefs.locate(d)[0], head, f"p{k}") for k, d in enumerate(dirs)]
