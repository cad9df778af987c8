"""The build cache stays bounded: serve stores a bundle per commit it follows (68 MB at
100,000 prompts), and prune keeps the last ones used, never what a process serves."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from follow_helpers import Recorder, package, prompt
from helpers.repo import commit_files, make_repo

from promptops.serve import cache as cache_module
from promptops.serve.cache import GENERATION, BuildCache
from promptops.serve.follow import Follower

Follow = Callable[..., Follower]


def entry(folder: Path, name: str, size: int, age: int) -> Path:
    """A file of ``size`` bytes last modified ``age`` seconds ago."""
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * size)
    when = 1_700_000_000 - age
    os.utime(path, (when, when))
    return path


def names(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir()}


def test_prune_keeps_the_newest_that_fit_and_what_is_served(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = BuildCache(tmp_path / "git", lambda m: None)
    trees = cache.dirs[0] / "trees"
    for k in range(6):  # t0 is the newest
        entry(trees, f"t{k}.bundle.json", 100, age=k)
    entry(trees, ".t9.bundle.json.123.tmp", 100, age=99)  # a writer's temp: not prune's
    for k in range(5):
        entry(cache.dirs[0] / "commits", f"c{k}.json", 10, age=k)
    monkeypatch.setattr(cache_module, "MAX_BUNDLES", 3)
    monkeypatch.setattr(cache_module, "MAX_COMMITS", 2)
    assert cache.prune(keep={"t5"}) == 3 + 3
    # t5 is served: kept and counted, so the two newest others fit
    assert names(trees) == {"t0.bundle.json", "t1.bundle.json", "t5.bundle.json",
                            ".t9.bundle.json.123.tmp"}
    assert names(cache.dirs[0] / "commits") == {"c0.json", "c1.json"}
    # the byte bound: 150 bytes hold t0 but not t1; once one does not fit, every older one
    # goes too (t2 would fit: the cache keeps the newest, not the most)
    monkeypatch.setattr(cache_module, "MAX_BYTES", 150)
    entry(trees, "t2.bundle.json", 10, age=2)
    assert cache.prune() == 3
    assert names(trees) == {"t0.bundle.json", ".t9.bundle.json.123.tmp"}
    assert cache.prune() == 0


def test_a_load_makes_an_entry_the_last_to_go(
    tmp_path: Path, follow: Follow, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "repo", package({"greet": "Hello"}))
    top = Path(repo.working_tree_dir or ".")
    [first] = follow([top]).initial()
    trees = top / ".git" / "promptops" / GENERATION / "trees"
    old = trees / f"{first['source']['tree']}.bundle.json"
    os.utime(old, (1_000_000_000, 1_000_000_000))
    entry(trees, "0" * 40 + ".bundle.json", 10, age=0)  # newer than `old`, never used
    assert follow([top]).initial() == [first]  # a load: `old` is the last used now
    monkeypatch.setattr(cache_module, "MAX_BUNDLES", 1)
    assert BuildCache(top / ".git", lambda m: None).prune() == 1
    assert names(trees) == {old.name}


def test_following_commits_keeps_the_cache_bounded_and_the_served_bundle(
    tmp_path: Path, follow: Follow, recorder: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cache_module, "MAX_BUNDLES", 2)
    repo = make_repo(tmp_path / "repo", package({"greet": "Hello", "bye": "Bye"}))
    top = Path(repo.working_tree_dir or ".")
    trees = top / ".git" / "promptops" / GENERATION / "trees"
    follower = follow([top])
    follower.initial()
    follower.start(recorder.on_change)
    served: list[str] = []
    for k in range(4):
        head = commit_files(repo, {"prompts/greet.prompt.yaml": prompt(f"Hello {k}")})
        [bundle] = recorder.wait_change(head)
        served.append(bundle["source"]["tree"])
    follower.stop()  # its last store and prune are done
    assert names(trees) == {f"{t}.bundle.json" for t in served[-2:]}
    # the served commit starts from the cache again: nothing to build
    restarted = follow([top])
    [again] = restarted.initial()
    assert again["source"]["tree"] == served[-1] and restarted.how == {top.resolve(): "cached"}
