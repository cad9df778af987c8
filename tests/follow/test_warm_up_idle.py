"""A stdio server's follower warms up only once its client is idle (follow.WARM_IDLE_S):
run while the first requests were answered, the warm-up held the GIL they waited for (the
first page of prompts/list at 100,000 prompts, docs/benchmarks.md "Growth, session 9")."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from helpers.repo import make_repo

from promptops.serve import follow
from promptops.serve.follow import Follower

FILES = {
    "pkg/promptops.yaml": "name: demo\nversion: 1.0.0\n",
    "pkg/prompts/alpha.prompt.yaml": ("description: a\nmessages:\n  - role: user\n"
                                      "    text: Hello\n"),
}


def test_the_warm_up_waits_until_the_client_is_idle(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(tmp_path / "repo", FILES)
    pkg = tmp_path / "repo" / "pkg"
    Follower([pkg], ref=None, log=lambda m: None).initial()  # fills the build cache
    monkeypatch.setattr(follow, "PREPARE_AT", 1)  # this one-prompt set counts as large
    logs: list[str] = []
    follower = Follower([pkg], ref=None, log=logs.append)
    follower.initial()
    idle = [0.0]
    follower.idle_for = lambda: idle[0]
    follower.start(lambda bundles: None)
    try:
        time.sleep(follow.POLL_S * 6)
        assert not any("warmed up" in m for m in logs)  # the client is busy
        idle[0] = follow.WARM_IDLE_S
        deadline = time.monotonic() + 10
        while not any("warmed up" in m for m in logs) and time.monotonic() < deadline:
            time.sleep(follow.POLL_S)
        assert any("warmed up" in m for m in logs)
    finally:
        follower.stop()

