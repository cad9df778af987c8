"""A team server started from a warm build cache parses its served commit before it listens;
an editor's stdio server stays lazy.

A restart with the build cache full serves HEAD without parsing anything (fast, light). Its
first new commit then paid the build stack's imports and a parse of every file on the way
to the listeners: 0.55-1.1 s at 1,000 prompts against ~0.25 s for every later commit
(issue 18: under 1 s to 1,000 listeners). ``serve --http`` warms its follower up before
it listens; stdio keeps issue 17's memory bound (a per-window server parses
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

from promptops.__main__ import _LintGate
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
    Follower([root], ref=None, log=lambda line: None, gate=_LintGate()).initial()
    return root, repo


def _parsed(follower: Follower) -> int:
    return len(follower._memo)  # prompt files parsed, and each template's include list


def test_a_warmed_follower_rebuilds_only_what_a_commit_changed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, repo = _cached_repo(tmp_path, monkeypatch)
    lines: list[str] = []
    follower = Follower([root], ref=None, log=lines.append, gate=_LintGate())
    follower.initial()
    assert _parsed(follower) == 0  # served from the cache: nothing parsed at start
    follower.warm_up()
    assert _parsed(follower) == 10, lines  # five prompt files and their five texts
    assert any("warmed up" in line and "5 prompts" in line for line in lines), lines
    follower.warm_up()  # once is enough: a second call parses nothing more
    assert sum("warmed up" in line for line in lines) == 1
    seen: list[list[Bundle]] = []
    done = threading.Event()

    def on_change(bundles: list[Bundle]) -> None:
        seen.append(bundles)
        done.set()

    follower.start(on_change)
    try:
        commit_files(repo, {"prompts/p0.prompt.yaml": PROMPT.format("Hi")})
        assert done.wait(30), lines
    finally:
        follower.stop()
    texts = {p["name"]: p["messages"][0] for p in seen[0][0]["prompts"]}
    assert sorted(texts) == [f"p{i}" for i in range(5)] and "Hi" in str(texts["p0"])
    assert _parsed(follower) == 12  # the warmed entries kept, two new ones for the edit
    assert not seen[1:]


def test_an_editor_s_follower_stays_lazy(tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    root, _ = _cached_repo(tmp_path, monkeypatch)
    lines: list[str] = []
    follower = Follower([root], ref=None, log=lines.append, gate=_LintGate())  # stdio's way
    follower.initial()
    follower.start(lambda bundles: None)
    try:
        time.sleep(0.5)  # several polls: nothing parses a served commit by itself
        assert _parsed(follower) == 0
    finally:
        follower.stop()
    assert not any("warmed up" in line for line in lines)


def test_a_fixed_ref_is_not_warmed_up(tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    root, _ = _cached_repo(tmp_path, monkeypatch)
    lines: list[str] = []
    follower = Follower([root], ref="main", log=lines.append, gate=_LintGate())
    follower.initial()
    follower.warm_up()  # `serve --http --ref main` never rebuilds: the parse would be waste
    assert _parsed(follower) == 0
    assert not any("warmed up" in line for line in lines)


def test_serve_http_warms_up_a_start_from_the_cache(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    root, _ = _cached_repo(tmp_path, monkeypatch)
    server = HttpServer([str(root), "--no-access-log"], tmp_path / "serve.log")
    try:  # healthy means listening, and the warm-up comes before that
        assert "warmed up: the served commit's 5 prompts are parsed" in server.stderr(), \
            server.stderr()
    finally:
        server.stop()
