"""A followed commit reaches the listeners before its bundle is written to the build cache.

Writing a 1,000-prompt bundle's canonical JSON costs ~40 ms: it used to sit between the
build and the swap, on the path from a commit to the listen streams (issue 18: under 1 s
to 1,000 listeners). The set is handed over first and stored right after, and a refused
commit still stores nothing. Real git repository, the real follower thread.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from helpers.repo import commit_files, make_repo

from promptops.pipeline.bundle_types import Bundle
from promptops.serve.cache import GENERATION
from promptops.serve.follow import Follower

PROMPT = "description: d\nmessages:\n- role: user\n  text: {0}\n"


def _stored(repo_root: Path) -> set[str]:
    folder = repo_root / ".git" / "promptops" / GENERATION / "commits"
    return {p.stem for p in folder.glob("*.json")} if folder.is_dir() else set()


def test_the_listeners_hear_of_a_commit_before_its_bundle_is_stored(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    root = tmp_path / "repo"
    repo = make_repo(root, {"promptops.yaml": "name: demo\nversion: 1.0.0\n",
                            "prompts/greet.prompt.yaml": PROMPT.format("Hello")})
    follower = Follower([root], ref=None, log=lambda line: None)
    first = follower.initial()
    assert _stored(root) == {first[0]["source"]["commit"]}  # the start is stored at once
    seen: list[tuple[str, bool]] = []
    done = threading.Event()

    def on_change(bundles: list[Bundle]) -> None:
        commit = bundles[0]["source"]["commit"]
        seen.append((commit, commit in _stored(root)))
        done.set()

    follower.start(on_change)
    try:
        second = commit_files(repo, {"prompts/greet.prompt.yaml": PROMPT.format("Hi")})
        assert done.wait(30), "the follower never handed the new commit over"
    finally:
        follower.stop()
    assert seen == [(second, False)]
    assert second in _stored(root)  # and stored once handed over
