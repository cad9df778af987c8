"""A team server started from a warm build cache makes what its first commit needs before it
listens; an editor's stdio server stays lazy below 20,000 prompts.

A restart with the build cache full serves HEAD without parsing anything (fast, light). Its
first new commit then paid the build stack's imports, the tree's listing, each prompt's
encoding and the lint record on the way to the listeners (1.6 s of CPU at 100,000 prompts
against ~0.5 s for every later commit). ``serve --http`` warms its follower up before it
listens, and so does a stdio server of 20,000 prompts or more, in its follower thread; a
smaller stdio server keeps issue 17's memory bound. The warm-up parses nothing: a commit is
rebuilt in proportion to what it changed. Real git repositories, the real follower thread
and lint gate, a real ``serve --http`` process.
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
from promptops.pipeline.rebuild import Built
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


def _ready(follower: Follower) -> bool:
    """Whether the first commit finds its base made (the tree listed, the encodings cut)."""
    bases = list(follower._last.values())
    return all(isinstance(b, Built) and b.entries is not None and b.encoded is not None
               for b in bases)


def test_a_warmed_follower_rebuilds_only_what_a_commit_changed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, repo = _cached_repo(tmp_path, monkeypatch)
    lines: list[str] = []
    follower = Follower([root], ref=None, log=lines.append, gate=_LintGate())
    follower.initial()
    assert _parsed(follower) == 0 and not _ready(follower)  # from the cache: nothing made
    follower.warm_up()
    assert _ready(follower), lines
    assert _parsed(follower) == 0  # nothing parsed: a rebuild reads what a commit changed
    assert any("warmed up" in line and "5 prompts" in line for line in lines), lines
    follower.warm_up()  # once is enough: a second call makes nothing more
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
    assert follower.how == {root.resolve(): "incremental"}
    assert _parsed(follower) == 4  # the edited file before and after (each and its text)
    assert not seen[1:]


def test_an_editor_s_follower_stays_lazy(tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    root, _ = _cached_repo(tmp_path, monkeypatch)
    lines: list[str] = []
    follower = Follower([root], ref=None, log=lines.append, gate=_LintGate())  # stdio's way
    follower.initial()
    follower.start(lambda bundles: None)
    try:
        time.sleep(0.5)  # several polls: nothing is made for a commit that may never come
        assert _parsed(follower) == 0 and not _ready(follower)
    finally:
        follower.stop()
    assert not any("warmed up" in line for line in lines)


def test_a_large_stdio_set_warms_up_in_the_follower_thread(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from promptops.serve import follow

    root, _ = _cached_repo(tmp_path, monkeypatch)
    monkeypatch.setattr(follow, "PREPARE_AT", 5)  # 20,000: these five prompts stand for it
    lines: list[str] = []
    follower = Follower([root], ref=None, log=lines.append, gate=_LintGate())
    follower.initial()
    follower.start(lambda bundles: None)
    try:
        deadline = time.monotonic() + 30
        while not any("warmed up" in line for line in lines) and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        follower.stop()
    assert _ready(follower) and _parsed(follower) == 0, lines


def test_a_fixed_ref_is_not_warmed_up(tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    root, _ = _cached_repo(tmp_path, monkeypatch)
    lines: list[str] = []
    follower = Follower([root], ref="main", log=lines.append, gate=_LintGate())
    follower.initial()
    follower.warm_up()  # `serve --http --ref main` never rebuilds: a warm-up would be waste
    assert _parsed(follower) == 0 and not _ready(follower)
    assert not any("warmed up" in line for line in lines)


def test_serve_http_warms_up_a_start_from_the_cache(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    root, _ = _cached_repo(tmp_path, monkeypatch)
    server = HttpServer([str(root), "--no-access-log"], tmp_path / "serve.log")
    try:  # healthy means listening, and the warm-up comes before that
        assert "warmed up: the served commit's 5 prompts are ready" in server.stderr(), \
            server.stderr()
    finally:
        server.stop()
