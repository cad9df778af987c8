"""Release channels (issue 27): promote, roll back, policy, and the audit log, in real
repositories with a real bare remote.

Two people promoting at once is staged with git itself: clone A's ``pre-push`` hook runs
clone B's whole promotion (a real ``python -m promptops`` process) after A has read the
remote and built its move, before A's push reaches the remote, which is the window two
concurrent promoters share. Exactly one of them may win.
"""

from __future__ import annotations

import atexit
import functools
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import git
import pytest
from helpers.repo import commit_files, make_repo, run_cli
from versioning_helpers import MANIFEST, base_files

from promptops.git.channels import ChannelMoved, Channels, channel_ref, log_ref
from promptops.versioning.channels import PromotionRefused, parse_duration, promote

POLICY = MANIFEST + ("channels:\n  - name: staging\n    gates: [lint]\n"
                     "  - name: production\n    soak: 1h\n")


def _released(root: Path, manifest: str = MANIFEST, versions: int = 2) -> git.Repo:
    """A repository with releases demo@1.0.0 .. demo@1.0.<versions-1>: a copy (work tree
    and ``.git``) of the one ``release`` made for these arguments in this test process,
    which the test then changes on its own (13 tests, 5 distinct repositories)."""
    shutil.copytree(_released_once(manifest, versions), root, symlinks=True)
    return git.Repo(root)


@functools.cache
def _released_once(manifest: str, versions: int) -> Path:
    root = Path(tempfile.mkdtemp(prefix="released-")) / "repo"
    atexit.register(shutil.rmtree, root.parent, ignore_errors=True)
    repo = make_repo(root, {**base_files(), "promptops.yaml": manifest}, "v1.0.0")
    assert run_cli("release", cwd=root).returncode == 0
    for patch in range(1, versions):
        text = manifest.replace("version: 1.0.0", f"version: 1.0.{patch}")
        commit_files(repo, {"promptops.yaml": text,
                            "partials/header.j2": f"You are careful, take {patch}.\n"},
                     f"1.0.{patch}")
        done = run_cli("release", cwd=root)
        assert done.returncode == 0, done.stderr
    return root


def _log(root: Path, channel: str) -> list[dict[str, object]]:
    done = run_cli("channels", "log", channel, "--format", "json", cwd=root)
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout))


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                          check=True).stdout.strip()


def test_promote_moves_the_channel_and_records_who_when_why(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    _released(root)
    done = run_cli("promote", "1.0.0", "--to", "staging", "-m", "first cut", cwd=root)
    assert done.returncode == 0, done.stderr
    assert "none -> demo@1.0.0" in done.stdout
    # the channel ref is the annotated release tag itself; its commit is the release's
    assert _git(root, "rev-parse", channel_ref("demo", "staging")) == \
        _git(root, "rev-parse", "refs/tags/demo@1.0.0")
    assert _git(root, "cat-file", "-t", channel_ref("demo", "staging")) == "tag"
    message = _git(root, "log", "-1", "--format=%an <%ae>%n%B", log_ref("demo", "staging"))
    assert message.startswith("Test Author <test@example.com>\npromote demo staging: none -> 1.0.0")
    assert "first cut" in message and "Promptops-To: demo@1.0.0" in message
    digest = _git(root, "cat-file", "-p", "refs/tags/demo@1.0.0").split("bundle-digest: ")[1][:71]
    assert f"Promptops-Digest: {digest}" in message
    again = run_cli("promote", "demo@1.0.0", "--to", "staging", cwd=root)
    assert again.returncode == 0 and "nothing to do" in again.stdout
    assert len(_log(root, "staging")) == 1  # a no-op records nothing
    listed = json.loads(run_cli("channels", "--format", "json", cwd=root).stdout)
    assert [(r["package"], r["channel"], r["release"], r["digest"], r["moved_by"])
            for r in listed] == [("demo", "staging", "demo@1.0.0", digest,
                                  "Test Author <test@example.com>")]
    text = run_cli("channels", cwd=root).stdout
    assert "demo/staging  demo@1.0.0" in text and "ago  promote by Test Author" in text
    assert "NOT RECORDED" not in text and listed[0]["recorded"] is True
    # moved by hand, past promptops: the listing says the log does not explain it
    _git(root, "update-ref", channel_ref("demo", "staging"), _git(root, "rev-parse",
                                                                   "refs/tags/demo@1.0.1"))
    text = run_cli("channels", cwd=root).stdout
    assert "demo/staging  demo@1.0.1" in text and "NOT RECORDED" in text


def test_promote_refuses_what_is_not_a_release(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    repo = _released(root, versions=1)
    missing = run_cli("promote", "2.0.0", "--to", "staging", cwd=root)
    assert missing.returncode == 1 and "no release demo@2.0.0" in missing.stderr
    # a hand-made tag whose recorded digest is not what its commit builds
    repo.git.tag("-a", "demo@1.0.9", "-m", "demo 1.0.9\n\nbundle-digest: sha256:" + "0" * 64)
    forged = run_cli("promote", "1.0.9", "--to", "staging", cwd=root)
    assert forged.returncode == 1
    assert "does not rebuild to its recorded digest (sha256:000" in forged.stderr
    repo.git.tag("demo@1.0.8")  # lightweight: records nothing
    light = run_cli("promote", "1.0.8", "--to", "staging", cwd=root)
    assert light.returncode == 1 and "records no bundle digest" in light.stderr
    bad = run_cli("promote", "1.0.0", "--to", "Prod!", cwd=root)
    assert bad.returncode == 2 and "is not a channel name" in bad.stderr
    assert Channels(root).all() == []


def test_rollback_goes_back_one_version_each_time_and_is_recorded(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    _released(root, versions=3)
    for v in ("1.0.0", "1.0.1", "1.0.2"):
        assert run_cli("promote", v, "--to", "production", cwd=root).returncode == 0
    done = run_cli("rollback", "production", "-m", "1.0.2 leaks", cwd=root)
    assert done.returncode == 0, done.stderr
    assert "demo@1.0.2 -> demo@1.0.1" in done.stdout
    assert _git(root, "rev-parse", channel_ref("demo", "production")) == \
        _git(root, "rev-parse", "refs/tags/demo@1.0.1")
    again = run_cli("rollback", "demo/production", cwd=root)
    assert again.returncode == 0 and "demo@1.0.1 -> demo@1.0.0" in again.stdout
    log = _log(root, "production")
    assert [(m["action"], m["from"], m["to"]) for m in log] == [
        ("rollback", "demo@1.0.1", "demo@1.0.0"), ("rollback", "demo@1.0.2", "demo@1.0.1"),
        ("promote", "demo@1.0.1", "demo@1.0.2"), ("promote", "demo@1.0.0", "demo@1.0.1"),
        ("promote", None, "demo@1.0.0")]
    assert log[1]["why"] == "1.0.2 leaks"
    last = run_cli("rollback", "production", cwd=root)
    assert last.returncode == 1 and "no earlier version to roll back to" in last.stderr
    assert len(_log(root, "production")) == 5  # the refusal recorded nothing


def test_policy_refusals_name_the_rule_and_the_way_out(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    _released(root, POLICY)
    unknown = run_cli("promote", "1.0.0", "--to", "canary", cwd=root)
    assert unknown.returncode == 1
    assert "channel 'canary' is not in the channels policy" in unknown.stderr
    assert "`- name: canary`" in unknown.stderr
    skipped = run_cli("promote", "1.0.0", "--to", "production", cwd=root)
    assert skipped.returncode == 1
    assert "rule `after: staging` of channel production" in skipped.stderr
    assert "`promptops promote demo@1.0.0 --to staging`" in skipped.stderr
    assert run_cli("promote", "1.0.0", "--to", "staging", cwd=root).returncode == 0
    early = run_cli("promote", "1.0.0", "--to", "production", cwd=root)
    assert early.returncode == 1
    assert "rule `soak: 1h` of channel production" in early.stderr
    assert "has been in staging for" in early.stderr and "promote it after" in early.stderr
    assert Channels(root).state("demo", "production").log is None
    # an hour later (the clock handed in) the same promotion passes
    later = promote(root, "1.0.0", "production", why="", remote=None,
                    gates={"lint": lambda b: None, "test": lambda b: None},
                    now=time.time() + 3601)
    assert later.changed and later.target == "demo@1.0.0"


def test_the_soak_is_measured_from_the_moment_of_the_earlier_promotion(tmp_path: Path) -> None:
    """Asked at the very second the version entered staging, it has been there 0s."""
    root = tmp_path / "repo"
    _released(root, POLICY, versions=1)
    assert run_cli("promote", "1.0.0", "--to", "staging", cwd=root).returncode == 0
    chans = Channels(root)
    [entered] = chans.moves(chans.state("demo", "staging").log)
    gates = {"lint": lambda b: None, "test": lambda b: None}
    with pytest.raises(PromotionRefused, match=r"has been in staging for 0s; .* \(in 1h\)"):
        promote(root, "1.0.0", "production", why="", remote=None, gates=gates,
                now=float(entered.when))
    with pytest.raises(PromotionRefused, match=r"has been in staging for 59m; .* \(in 1m\)"):
        promote(root, "1.0.0", "production", why="", remote=None, gates=gates,
                now=entered.when + 3540.0)
    assert promote(root, "1.0.0", "production", why="", remote=None, gates=gates,
                   now=entered.when + 3600.0).changed


def test_a_failing_gate_refuses_and_says_which(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    _released(root, POLICY, versions=1)
    with pytest.raises(PromotionRefused, match=r"gate `lint` of channel staging .*: no!"):
        promote(root, "1.0.0", "staging", why="", remote=None,
                gates={"lint": lambda b: "no!", "test": lambda b: None})
    assert Channels(root).all() == []


def test_policy_in_the_manifest_is_validated(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    bad = MANIFEST + "channels:\n  - name: production\n    after: staging\n    soak: soon\n"
    make_repo(root, {**base_files(), "promptops.yaml": bad})
    done = run_cli("check", cwd=root)
    assert done.returncode == 1
    assert "promptops.yaml" in done.stderr + done.stdout
    assert "soak" in done.stderr + done.stdout
    assert parse_duration("1d12h") == 129600
    with pytest.raises(ValueError):
        parse_duration("12")


def test_local_compare_and_swap_changes_nothing_when_the_channel_moved(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    _released(root)
    assert run_cli("promote", "1.0.0", "--to", "staging", cwd=root).returncode == 0
    chans = Channels(root)
    before = chans.state("demo", "staging")
    entry = chans.record(before.log, "promote demo staging: 1.0.0 -> 1.0.1", "",
                         [("To", "demo@1.0.1")])
    assert run_cli("promote", "1.0.1", "--to", "staging", cwd=root).returncode == 0
    moved = chans.state("demo", "staging")
    with pytest.raises(ChannelMoved):  # built on `before`, but the channel moved since
        chans.swap([(channel_ref("demo", "staging"), _git(root, "rev-parse", "demo@1.0.0"),
                     before.pointer), (log_ref("demo", "staging"), entry, before.log)])
    assert chans.state("demo", "staging") == moved


def _clone(remote: Path, dest: Path) -> Path:
    subprocess.run(["git", "clone", "-q", str(remote), str(dest)], check=True)
    for key, value in (("user.name", dest.name), ("user.email", f"{dest.name}@example.com")):
        _git(dest, "config", key, value)
    return dest


def test_two_clones_promoting_at_once_one_wins_and_history_survives_a_clone(
        tmp_path: Path) -> None:
    origin = tmp_path / "origin"
    _released(origin, versions=3)
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(origin), str(bare)], check=True)
    alice, bob = _clone(bare, tmp_path / "alice"), _clone(bare, tmp_path / "bob")
    assert run_cli("promote", "1.0.0", "--to", "production", "--push", "origin",
                   cwd=alice).returncode == 0
    # Bob promotes 1.0.2 while Alice's promotion of 1.0.1 is between reading and pushing
    hook = alice / ".git" / "hooks" / "pre-push"
    hook.write_text(
        f"#!/bin/sh\ncd {bob} && env -i PATH=\"$PATH\" HOME=\"$HOME\" "
        f"PYTHONPATH={os.pathsep.join(sys.path)!r} {sys.executable} -m promptops promote "
        "1.0.2 --to production -m 'bob was first' --push origin >../bob.out 2>&1\n")
    hook.chmod(hook.stat().st_mode | stat.S_IEXEC)
    lost = run_cli("promote", "1.0.1", "--to", "production", "-m", "alice", "--push", "origin",
                   cwd=alice)
    bob_out = (tmp_path / "bob.out").read_text()
    assert bob_out.startswith("promoted demo/production on origin: demo@1.0.0 -> demo@1.0.2"), \
        bob_out
    assert lost.returncode == 1, lost.stdout
    assert "was moved on origin by someone else" in lost.stderr
    assert "nothing was changed" in lost.stderr
    hook.unlink()
    # the remote has Bob's move on top of the first, not Alice's
    remote_log = _git(bare, "log", "--format=%an %s", log_ref("demo", "production"))
    assert remote_log.splitlines() == ["bob promote demo production: 1.0.0 -> 1.0.2",
                                       "alice promote demo production: none -> 1.0.0"]
    assert _git(bare, "rev-parse", channel_ref("demo", "production")) == \
        _git(origin, "rev-parse", "refs/tags/demo@1.0.2")
    # Alice's refs are still the remote's old state: her lost move left no trace
    assert len(_log(alice, "production")) == 1
    # a rollback on the remote, then a fresh clone reads the same history as Bob
    assert run_cli("rollback", "production", "-m", "too soon", "--push", "origin",
                   cwd=bob).returncode == 0
    fresh = _clone(bare, tmp_path / "fresh")
    unfetched = run_cli("channels", "log", "production", cwd=fresh)  # clone skips refs/promptops
    assert unfetched.returncode == 2 and "no channel 'production'" in unfetched.stderr
    fetched = run_cli("channels", "fetch", "origin", cwd=fresh)
    assert fetched.returncode == 0, fetched.stderr
    run_cli("channels", "fetch", "origin", cwd=bob)
    assert _log(fresh, "production") == _log(bob, "production")
    assert [m["action"] for m in _log(fresh, "production")] == ["rollback", "promote", "promote"]
    assert _git(fresh, "rev-parse", "refs/promptops/channels/demo/production^{commit}") == \
        _git(origin, "rev-parse", "demo@1.0.0^{commit}")


def test_channel_names_are_revisions(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    _released(root)
    for v, channel in (("1.0.0", "production"), ("1.0.1", "staging")):
        assert run_cli("promote", v, "--to", channel, cwd=root).returncode == 0
    diff = run_cli("diff", "production", "staging", "--format", "json", cwd=root)
    assert diff.returncode == 0, diff.stderr
    review = json.loads(diff.stdout)
    assert review["base"]["commit"] == _git(root, "rev-parse", "demo@1.0.0^{commit}")
    assert review["head"]["commit"] == _git(root, "rev-parse", "demo@1.0.1^{commit}")
    assert '"rendered_changed": true' in diff.stdout
    built = run_cli("build", "--ref", "production", "-o", str(tmp_path / "dist"), cwd=root)
    assert built.returncode == 0, built.stderr
    bundle = json.loads(next((tmp_path / "dist").glob("*.json")).read_text())
    tagged = _git(root, "cat-file", "-p", "refs/tags/demo@1.0.0")
    assert f"bundle-digest: {bundle['digest']}" in tagged  # the release's very bundle
    shown = run_cli("render", "review", "-a", "code=x", "--ref", "demo/staging", cwd=root)
    assert shown.returncode == 0, shown.stderr
    assert "take 1" in shown.stdout
    old = run_cli("render", "review", "-a", "code=x", "--ref", "production", cwd=root)
    assert "take 1" not in old.stdout and "You are careful." in old.stdout
    assert run_cli("test", "--ref", "staging", cwd=root).returncode == 0
    _git(root, "branch", "production", "HEAD~1")  # a branch of that name wins over the channel
    assert run_cli("ls", "--ref", "production", "--format", "json", cwd=root).returncode == 0
    unknown = run_cli("build", "--ref", "canary", cwd=root)
    assert unknown.returncode == 2 and "unknown revision 'canary'" in unknown.stderr


def test_channels_push_publishes_local_moves_unless_the_remote_moved_on(tmp_path: Path) -> None:
    origin = tmp_path / "origin"
    _released(origin, versions=3)
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(origin), str(bare)], check=True)
    alice, bob = _clone(bare, tmp_path / "alice"), _clone(bare, tmp_path / "bob")
    assert run_cli("promote", "1.0.0", "--to", "staging", cwd=alice).returncode == 0
    pushed = run_cli("channels", "push", "origin", cwd=alice)
    assert pushed.returncode == 0, pushed.stderr
    assert _git(bare, "rev-parse", log_ref("demo", "staging")) == \
        _git(alice, "rev-parse", log_ref("demo", "staging"))
    # Bob moves staging on the remote; Alice's later local move must not overwrite it
    assert run_cli("channels", "fetch", "origin", cwd=bob).returncode == 0
    assert run_cli("promote", "1.0.2", "--to", "staging", "--push", "origin",
                   cwd=bob).returncode == 0
    assert run_cli("promote", "1.0.1", "--to", "staging", cwd=alice).returncode == 0
    before = _git(bare, "for-each-ref", "refs/promptops/")
    refused = run_cli("channels", "push", "origin", cwd=alice)
    assert refused.returncode == 1 and "nothing was pushed" in refused.stderr
    assert _git(bare, "for-each-ref", "refs/promptops/") == before


def test_a_bad_remote_is_a_clean_error_and_never_an_option(tmp_path: Path) -> None:
    """Unreachable or option-shaped remotes: exit 2 with git's words, nothing changed."""
    root = tmp_path / "repo"
    _released(root, versions=1)
    marker = tmp_path / "pwned"
    evil = f"--upload-pack=touch {marker}"
    for args in (["promote", "1.0.0", "--to", "staging", "--push", evil],
                 ["channels", "fetch", evil], ["channels", "push", evil]):
        done = run_cli(*args, cwd=root)
        assert done.returncode == 2, (args, done.stderr)
        assert "internal error" not in done.stderr, done.stderr
    assert not marker.exists()
    assert Channels(root).all() == []


def test_the_reason_cannot_forge_a_trailer_and_is_bounded(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    _released(root)
    long = run_cli("promote", "1.0.0", "--to", "staging", "-m", "x" * 4001, cwd=root)
    assert long.returncode == 2 and "at most 4000" in long.stderr
    assert Channels(root).all() == []
    forged = "fine\n\nPromptops-To: demo@9.9.9\nPromptops-Action: rollback\x1b[31m"
    assert run_cli("promote", "1.0.0", "--to", "staging", "-m", forged, cwd=root).returncode == 0
    [move] = _log(root, "staging")
    assert (move["to"], move["action"], move["why"]) == ("demo@1.0.0", "promote", "fine")


def test_the_review_says_which_channels_hold_the_package(tmp_path: Path) -> None:
    """Issue 27 item 6: the review comment names each channel's version, read from the
    repository's channel refs; a hostile channel name stays inert in the comment."""
    root = tmp_path / "repo"
    repo = _released(root, versions=3)
    for v, channel in (("1.0.1", "production"), ("1.0.2", "staging")):
        assert run_cli("promote", v, "--to", channel, cwd=root).returncode == 0
    md = run_cli("diff", "demo@1.0.1", "demo@1.0.2", "--format", "markdown", cwd=root)
    assert md.returncode in (0, 1), md.stderr
    assert ("**Channels:** `production` has 1.0.1 (this change's base), `staging` has 1.0.2 "
            "(this change's head).") in md.stdout
    js = run_cli("diff", "demo@1.0.1", "demo@1.0.2", "--format", "json", cwd=root)
    chans = {c["name"]: c for c in json.loads(js.stdout)["packages"][0]["channels"]}
    assert chans["production"]["release"] == "demo@1.0.1" and chans["production"]["base"]
    assert chans["staging"]["commit"] == _git(root, "rev-parse", "demo@1.0.2^{commit}")
    assert chans["staging"]["head"] and not chans["staging"]["base"]
    # A channel ref written past promptops (git allows this name) is shown, inert.
    hostile = "x](evil.example)<b>`@here_|#"
    _git(root, "update-ref", f"refs/promptops/channels/demo/{hostile}", "demo@1.0.0")
    md = run_cli("diff", "demo@1.0.1", "demo@1.0.2", "--format", "markdown", cwd=root).stdout
    line = next(ln for ln in md.splitlines() if ln.startswith("**Channels:**"))
    assert f"``{hostile}`` has 1.0.0" in line
    from markdown_it import MarkdownIt  # the comment as GitHub-flavoured markdown reads it
    html = MarkdownIt("gfm-like").render(line)
    assert "<a " not in html and "<b>" not in html
    # Without channels the line is absent.
    plain = tmp_path / "plain"
    git.Repo.clone_from(str(root), str(plain))
    md = run_cli("diff", "demo@1.0.1", "demo@1.0.2", "--format", "markdown", cwd=plain).stdout
    assert "Channels:" not in md and "demo@1.0.1" in md
    del repo
