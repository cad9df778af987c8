"""The follower in channel mode, in process: a monorepo whose two packages both have a
`production` channel, each served from its own release; a promote reaches ``on_change``
with the promoted release's own bundle (its recorded digest); a deleted channel keeps the
last good set served."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
from follow.follow_helpers import Recorder, manifest, prompt
from helpers.repo import commit_files, make_repo, run_cli

from promptops.serve.follow import Follower


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                          check=True).stdout.strip()


def _ok(root: Path, *args: str) -> None:
    done = run_cli(*args, cwd=root)
    assert done.returncode == 0, done.stderr


def test_a_monorepo_serves_each_package_from_its_channel_and_follows_it(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    repo = make_repo(root, {"a/promptops.yaml": manifest("a"),
                            "a/prompts/greet.prompt.yaml": prompt("Hello"),
                            "b/promptops.yaml": manifest("b"),
                            "b/prompts/bye.prompt.yaml": prompt("Bye")})
    _ok(root / "a", "release")
    _ok(root / "b", "release")
    commit_files(repo, {"a/promptops.yaml": manifest("a", "1.0.1"),
                        "a/prompts/greet.prompt.yaml": prompt("Howdy")}, "a 1.0.1")
    _ok(root / "a", "release")
    _ok(root / "a", "promote", "1.0.0", "--to", "production")
    _ok(root / "b", "promote", "1.0.0", "--to", "production")
    rec = Recorder()
    follower = Follower([root / "a", root / "b"], ref=None, log=rec.log, channel="production")
    try:
        first = follower.initial()
        assert [b["prompts"][0]["messages"][0]["text"] for b in first] == [
            "Hello {{ topic }}", "Bye {{ topic }}"]
        assert [b["source"]["commit"] for b in first] == [
            _git(root, "rev-parse", f"{p}@1.0.0^{{commit}}") for p in ("a", "b")]
        assert {b["source"].get("channel") for b in first} == {"production"}  # type: ignore[misc]
        tag = _git(root, "cat-file", "-p", "refs/tags/a@1.0.0")
        assert f"bundle-digest: {first[0]['digest']}" in tag  # the served bundle is the release
        follower.start(rec.on_change)
        time.sleep(0.2)
        _ok(root / "a", "promote", "1.0.1", "--to", "production")
        moved = time.monotonic()
        want = _git(root, "rev-parse", "a@1.0.1^{commit}")
        bundles = rec.wait_change(want)
        latency = time.monotonic() - moved
        assert bundles[0]["prompts"][0]["messages"][0]["text"] == "Howdy {{ topic }}"
        assert bundles[1]["source"]["commit"] == first[1]["source"]["commit"]
        assert latency < 2.0, latency  # a poll, the 120 ms quiet period and one build
        # a deleted channel: logged, and what was served stays served
        _git(root, "update-ref", "-d", "refs/promptops/channels/a/production")
        rec.wait_log("the channel 'production' has no commit")
        rec.settle(0.3)
        assert len(rec.changes) == 1
    finally:
        follower.stop()


@pytest.mark.parametrize("extra", [["--ref", "HEAD"], ["--worktree"], ["--bundle", "x.json"]])
def test_channel_is_not_combined_with_another_source(tmp_path: Path, extra: list[str]) -> None:
    make_repo(tmp_path, {"promptops.yaml": manifest("a"), "prompts/g.prompt.yaml": prompt("Hi")})
    done = run_cli("serve", "--channel", "production", *extra, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "--channel" in done.stderr or "cannot be combined" in done.stderr


def test_serving_a_channel_that_does_not_exist_says_how_to_make_it(tmp_path: Path) -> None:
    make_repo(tmp_path, {"promptops.yaml": manifest("a"), "prompts/g.prompt.yaml": prompt("Hi")})
    done = run_cli("serve", "--channel", "production", cwd=tmp_path)
    assert done.returncode == 2
    assert "no channel 'production'" in done.stderr
    assert "promptops promote VERSION --to production" in done.stderr
