"""A follower polled from an event loop (``serve --http``: ``Background.poll_from``).

The loop looks at the watched refs every ``POLL_S`` while the follower's thread sleeps;
a change wakes the thread, which waits out the quiet period and rebuilds as when it polls
itself. Here: each checkout, commit and reset is still one new set, the thread makes no
poll of its own while nothing changes (the loop makes them all), it sleeps again after a
change, a failing poll hands the looking back to the thread, and stop ends a sleeping
thread at once.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import git
import pytest
from follow_helpers import Recorder, package
from helpers.repo import commit_files, make_repo

from promptops.serve.background import POLL_S
from promptops.serve.follow import Follower


class Counting(Follower):
    """A follower that notes which thread made each poll."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.polls: list[str] = []
        self.fail = False

    def _signature(self) -> tuple[object, ...]:
        self.polls.append(threading.current_thread().name)
        if self.fail and threading.current_thread().name == "loop":
            raise OSError("a poll that fails")
        return super()._signature()


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    made = asyncio.new_event_loop()
    thread = threading.Thread(target=made.run_forever, name="loop", daemon=True)
    thread.start()
    yield made
    made.call_soon_threadsafe(made.stop)
    thread.join(10)
    made.close()


@pytest.fixture
def repo(tmp_path: Path) -> git.Repo:
    return make_repo(tmp_path / "repo", package({"greet": "Hello"}))


@pytest.fixture
def follower(repo: git.Repo, recorder: Recorder,
             loop: asyncio.AbstractEventLoop) -> Iterator[Counting]:
    made = Counting([Path(repo.working_tree_dir or ".")], ref=None, log=recorder.log)
    made.initial()
    made.start(recorder.on_change)
    loop.call_soon_threadsafe(made.poll_from, loop)
    yield made
    made.stop()


def _settled(follower: Counting, seconds: float = 10.0) -> None:
    """Until the thread sleeps (it published what it last saw)."""
    deadline = time.monotonic() + seconds
    while follower._idle is None:
        assert time.monotonic() < deadline, "the follower's thread never went to sleep"
        time.sleep(POLL_S / 5)


def _by_thread(follower: Counting, seconds: float) -> tuple[int, int]:
    """(the follower thread's polls, the loop's) over the next ``seconds``."""
    before = len(follower.polls)
    time.sleep(seconds)
    made = follower.polls[before:]
    return sum(1 for name in made if name != "loop"), made.count("loop")


def test_each_change_is_one_new_set(repo: git.Repo, follower: Counting,
                                    recorder: Recorder) -> None:
    first = repo.head.commit.hexsha
    text = package({"greet": "Hi"})["prompts/greet.prompt.yaml"]
    second = commit_files(repo, {"prompts/greet.prompt.yaml": text})
    recorder.wait_change(second)
    repo.git.checkout("-q", "-b", "other")
    third = commit_files(repo, {"prompts/greet.prompt.yaml": text.replace("Hi", "Hey")})
    recorder.wait_change(third)
    repo.git.reset("-q", "--hard", first)
    recorder.wait_change(first)
    _settled(follower)
    assert recorder.commits() == [second[:12], third[:12], first[:12]]


def test_the_thread_sleeps_while_the_loop_polls(repo: git.Repo, follower: Counting,
                                                recorder: Recorder) -> None:
    _settled(follower)
    mine, loops = _by_thread(follower, POLL_S * 12)
    assert mine == 0 and loops >= 4, (mine, loops)
    text = package({"greet": "Hi"})["prompts/greet.prompt.yaml"]
    recorder.wait_change(commit_files(repo, {"prompts/greet.prompt.yaml": text}))
    _settled(follower)  # and asleep again after the change
    mine, loops = _by_thread(follower, POLL_S * 12)
    assert mine == 0 and loops >= 4, (mine, loops)


def test_a_failing_poll_wakes_the_thread(repo: git.Repo, follower: Counting,
                                         recorder: Recorder) -> None:
    _settled(follower)
    follower.fail = True
    mine, _ = _by_thread(follower, POLL_S * 8)
    assert mine > 0  # the thread looked for itself
    follower.fail = False
    text = package({"greet": "Hi"})["prompts/greet.prompt.yaml"]
    recorder.wait_change(commit_files(repo, {"prompts/greet.prompt.yaml": text}))


def test_stop_ends_a_sleeping_thread(follower: Counting) -> None:
    _settled(follower)
    thread = follower._thread
    assert thread is not None and thread.is_alive()
    started = time.monotonic()
    follower.stop()
    assert not thread.is_alive()
    assert time.monotonic() - started < 5


def test_without_a_loop_the_thread_polls(repo: git.Repo, recorder: Recorder,
                                         follow: Callable[..., Follower]) -> None:
    made = Counting([Path(repo.working_tree_dir or ".")], ref=None, log=recorder.log)
    made.initial()
    made.start(recorder.on_change)
    try:
        time.sleep(POLL_S * 4)
        mine, _ = _by_thread(made, POLL_S * 8)
        assert mine >= 3
    finally:
        made.stop()
