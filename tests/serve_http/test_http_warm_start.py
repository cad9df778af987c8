"""A team server started from a warm build cache parses its served commit before the first
new one arrives; an editor's stdio server stays lazy.

A restart with the build cache full serves HEAD without parsing anything (fast, light). Its
first new commit then paid the build stack's imports and a parse of every file on the way
to the listeners: 0.55-1.1 s at 1,000 prompts against ~0.25 s for every later commit
(issue 18: under 1 s to 1,000 listeners). ``serve --http`` asks its follower to warm up in
its own thread at start; stdio keeps issue 17's memory bound (a per-window server parses
nothing until HEAD reaches a commit the cache lacks). Real git repositories, the real
follower thread and lint gate, a real ``serve --http`` process.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import git
import pytest
from helpers.repo import commit_files, make_repo
from http_helpers import HttpServer

from promptops.__main__ import _lint_gate
from promptops.pipeline.bundle_types import Bundle
from promptops.serve.follow import Follower

PROMPT = "description: d\nmessages:\n- role: user\n  text: {0}\n"
FILES = {"promptops.yaml": "name: demo\nversion: 1.0.0\n",
         **{f"prompts/p{i}.prompt.yaml": PROMPT.format(f"Hello {i}") for i in range(5)}}


def _cached_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, git.Repo]:
    """A package whose HEAD is in the build cache (a server ran on it before)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    root = tmp_path / "repo"
    repo = make_repo(root, FILES)
    Follower([root], ref=None, log=lambda line: None, gate=_lint_gate).initial()
    return root, repo


def _parsed(follower: Follower) -> int:
    return len(follower._memo._prompts)


def _wait_parsed(follower: Follower, n: int, within: float) -> int:
    deadline = time.monotonic() + within
    while _parsed(follower) < n and time.monotonic() < deadline:
        time.sleep(0.02)
    return _parsed(follower)


def test_a_warm_follower_parses_the_served_commit_before_any_commit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, repo = _cached_repo(tmp_path, monkeypatch)
    lines: list[str] = []
    follower = Follower([root], ref=None, log=lines.append, gate=_lint_gate, warm=True)
    follower.initial()
    assert _parsed(follower) == 0  # served from the cache: nothing parsed at start
    seen: list[list[Bundle]] = []
    done = threading.Event()

    def on_change(bundles: list[Bundle]) -> None:
        seen.append(bundles)
        done.set()

    follower.start(on_change)
    try:
        assert _wait_parsed(follower, 5, 30) == 5, lines
        assert any("warmed up" in line and "5 prompts" in line for line in lines), lines
        # the first new commit is served, and re-parses only the file it changed
        commit_files(repo, {"prompts/p0.prompt.yaml": PROMPT.format("Hi")})
        assert done.wait(30), lines
    finally:
        follower.stop()
    assert [p["name"] for p in seen[0][0]["prompts"]] == [f"p{i}" for i in range(5)]
    assert _parsed(follower) == 6  # five warmed entries kept, one new one for the edit
    assert not seen[1:]


def test_an_editor_s_follower_stays_lazy(tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    root, _ = _cached_repo(tmp_path, monkeypatch)
    lines: list[str] = []
    follower = Follower([root], ref=None, log=lines.append, gate=_lint_gate)  # stdio's way
    follower.initial()
    follower.start(lambda bundles: None)
    try:
        time.sleep(0.5)  # several polls: a warm-up would have run first
        assert _parsed(follower) == 0
    finally:
        follower.stop()
    assert not any("warmed up" in line for line in lines)


def test_serve_http_warms_up_a_start_from_the_cache(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    root, _ = _cached_repo(tmp_path, monkeypatch)
    server = HttpServer([str(root), "--no-access-log"], tmp_path / "serve.log")
    try:
        deadline = time.monotonic() + 30
        while "warmed up" not in server.stderr() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert "warmed up: the served commit's 5 prompts are parsed" in server.stderr(), \
            server.stderr()
    finally:
        server.stop()
