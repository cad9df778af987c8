"""The follow tests' fixtures: a private user cache for every test, the Recorder, and
``follow(dirs, ref=None)`` making Followers that are stopped at teardown."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from follow_helpers import Recorder

from promptops.serve.follow import Follower


@pytest.fixture(name="user_cache", autouse=True)
def user_cache_fixture(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The fallback cache dir must never be the real ~/.cache of whoever runs the tests."""
    cache = tmp_path / "user-cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    return cache


@pytest.fixture(name="recorder")
def recorder_fixture() -> Recorder:
    return Recorder()


@pytest.fixture(name="follow")
def follow_fixture(recorder: Recorder) -> Iterator[Callable[..., Follower]]:
    """``follow(dirs, ref=None)`` -> a Follower logging to ``recorder``; stopped at teardown."""
    made: list[Follower] = []

    def factory(dirs: list[Path], ref: str | None = None) -> Follower:
        follower = Follower(dirs, ref=ref, log=recorder.log)
        made.append(follower)
        return follower

    yield factory
    for follower in made:
        follower.stop()
