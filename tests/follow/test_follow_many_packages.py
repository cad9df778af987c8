"""Following several packages of one repository: what a commit costs the packages it left.

A commit asks git for the packages' trees once. Each package's tree at a new commit
decides whether it is served as it was; with 100 packages one ``git rev-parse`` each took
~0.5 s between a commit and its listeners. The follower now asks ``git cat-file
--batch-check`` once a repository and commit (``refs.trees_of``, held to ``tree_of`` by
tests/git/test_git_trees_of.py).

A package left as it was is restamped by its :class:`~promptops.serve.cache.Stamp` (the
canonical JSON of the bundle, ~11 ms a 1,000-prompt package, once); the warm-up makes each
one ahead, so the first commit of a session encodes no bundle it did not change.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import git
import pytest
from follow_helpers import Recorder, package, texts
from helpers.repo import commit_files, make_repo

from promptops.git import refs as gitrefs
from promptops.pipeline.bundle import digest
from promptops.serve import cache
from promptops.serve.follow import Follower

Follow = Callable[..., Follower]


def _mono(tmp_path: Path, count: int) -> tuple[git.Repo, Path]:
    """One repository holding ``count`` packages ``p0/`` .. (``pkg0`` ..), one prompt each."""
    files: dict[str, str | None] = {}
    for k in range(count):
        files.update(package({f"g{k}": f"Hi {k}"}, name=f"pkg{k}", at=f"p{k}/"))
    repo = make_repo(tmp_path / "mono", files)
    return repo, Path(repo.working_tree_dir or ".")


def _count_stamps(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the packages a :class:`~promptops.serve.cache.Stamp` is made for,
    from now on (each is the whole bundle's canonical JSON)."""
    made: list[str] = []
    real = cache.Stamp.__init__

    def counted(self: cache.Stamp, bundle: cache.Bundle) -> None:
        made.append(bundle["package"]["name"])
        real(self, bundle)

    monkeypatch.setattr(cache.Stamp, "__init__", counted)
    return made


def test_a_commit_asks_git_once_for_the_trees_of_all_packages(
    tmp_path: Path, follow: Follow, recorder: Recorder, monkeypatch: pytest.MonkeyPatch,
) -> None:
    repo, top = _mono(tmp_path, 3)
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


def test_the_warm_up_makes_the_stamps_a_commit_restamps_with(
    tmp_path: Path, follow: Follow, recorder: Recorder, monkeypatch: pytest.MonkeyPatch,
) -> None:
    repo, top = _mono(tmp_path, 3)
    follow([top / f"p{k}" for k in range(3)]).initial()  # fills the build cache
    follower = follow([top / f"p{k}" for k in range(3)])
    first = follower.initial()  # from the cache
    made = _count_stamps(monkeypatch)
    follower.warm_up()
    assert sorted(made) == ["pkg0", "pkg1", "pkg2"]
    made.clear()
    follower.start(recorder.on_change)
    head = commit_files(repo, {"p1/prompts/g1.prompt.yaml": "description: d\n"
                               "messages:\n  - role: user\n    text: changed\n"})
    bundles = recorder.wait_change(head)
    assert made == []  # pkg0 and pkg2 restamped from the warm-up's stamps
    for old, new in zip((first[0], first[2]), (bundles[0], bundles[2]), strict=True):
        assert new["digest"] == digest(new) != old["digest"]
        assert new == {**old, "source": {**old["source"], "commit": head},
                       "digest": new["digest"]}


def test_a_start_from_the_cache_on_the_built_commit_encodes_no_bundle(
    tmp_path: Path, follow: Follow, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A restart on the commit the cache's bundles were built from serves them as stored:
    no :class:`~promptops.serve.cache.Stamp` (the bundle's whole JSON) is made."""
    repo, top = _mono(tmp_path, 2)
    dirs = [top / f"p{k}" for k in range(2)]
    built = follow(dirs).initial()  # fills the build cache
    made = _count_stamps(monkeypatch)
    follower = follow(dirs)
    assert follower.initial() == built
    assert set(follower.how.values()) == {"cached"} and made == []
    # on another commit that leaves both packages as they were, each is restamped
    head = commit_files(repo, {"README.md": "a readme\n"})
    again = follow(dirs).initial()
    assert sorted(made) == ["pkg0", "pkg1"]
    assert [b["source"]["commit"] for b in again] == [head, head]
    assert all(b["digest"] == digest(b) for b in again)


def test_a_check_reads_head_once_a_repository_not_once_a_package(
    tmp_path: Path, follow: Follow, recorder: Recorder, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The packages of one repository share its HEAD: the follower's check (at start, and
    after every change of the watched files) reads it once, not once a package (100
    packages: ~2.7 ms of the interpreter a check, held while a client's first requests
    waited). Packages of two repositories each get their own repository's HEAD."""
    repo, top = _mono(tmp_path, 3)
    other = make_repo(tmp_path / "other", package({"o": "Other"}, name="other"))
    dirs = [top / "p0", Path(other.working_tree_dir or "."), top / "p1", top / "p2"]
    follower = follow(dirs)
    follower.initial()
    read: list[Path] = []
    real = gitrefs.read_head

    def counted(repo: gitrefs.Repo) -> gitrefs.Head:
        read.append(repo.top)
        return real(repo)

    monkeypatch.setattr(gitrefs, "read_head", counted)
    follower.start(recorder.on_change)
    head = commit_files(repo, {"p1/prompts/g1.prompt.yaml": "description: d\n"
                               "messages:\n  - role: user\n    text: changed\n"})
    bundles = recorder.wait_change(head)
    follower.stop()
    assert texts(bundles[2]) == {"g1": "changed"}
    assert texts(bundles[1]) == {"o": "Other {{ topic }}"}
    assert [b["source"]["commit"] for b in bundles] == [
        head, other.head.commit.hexsha, head, head]
    assert read and len(read) % 2 == 0  # each check: the two repositories, once each
    assert sorted(set(read)) == sorted({top.resolve(), Path(other.working_tree_dir or ".")
                                        .resolve()})
    assert all(read[k] != read[k + 1] for k in range(0, len(read), 2)), read
