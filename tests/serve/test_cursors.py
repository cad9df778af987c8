"""List cursors: never a mixed list across a checkout, forgery-proof, the same on every
server that shares a key (what a multi-replica HTTP server at one commit needs)."""

from __future__ import annotations

import base64
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import git
from serve_helpers import RawClient, commit, envelope, kit_files, serve_cmd

MODERN = "2026-07-28"
Raw = Callable[..., RawClient]


def _names(c: RawClient, cursor: str | None = None) -> tuple[list[str], str | None]:
    params = {**envelope(), **({"cursor": cursor} if cursor else {})}
    result = c.request("prompts/list", params)["result"]
    return [p["name"] for p in result["prompts"]], result.get("nextCursor")


def test_a_checkout_mid_pagination_never_gives_a_mixed_list(
        repo_factory: Callable[..., git.Repo]) -> None:
    repo = repo_factory(kit_files(extra_prompts=6))
    root = Path(repo.working_tree_dir or ".")
    c = RawClient([str(root), "--page-size", "4"], MODERN)
    try:
        c.send({"jsonrpc": "2.0", "id": "sub", "method": "subscriptions/listen",
                "params": {**envelope(), "notifications": {"promptsListChanged": True}}})
        c.recv()
        first, cursor = _names(c)
        assert first == ["broken", "code_review", "media", "p00"] and cursor
        commit(repo, {"prompts/aaa.prompt.yaml": "messages:\n  - role: user\n    text: new\n"},
               "a prompt that sorts first")
        assert c.recv(timeout=30)["method"] == "notifications/prompts/list_changed"
        err = c.request("prompts/list", {**envelope(), "cursor": cursor})["error"]
        assert err["code"] == -32602 and "stale cursor" in err["message"]
        names, cursor = _names(c)  # listing again from the start: the new commit, whole
        while cursor:
            more, cursor = _names(c, cursor)
            names += more
        assert names == sorted(names) and len(names) == len(set(names)) == 10
        assert names[0] == "aaa"
    finally:
        rc, err_text = c.close()
    assert rc == 0, err_text


def test_forged_and_foreign_cursors_are_invalid_params(raw: Raw) -> None:
    c = raw(MODERN, "--page-size", "2")
    _, cursor = _names(c)
    assert cursor is not None
    body, _, tag = cursor.partition(".")
    payload = base64.urlsafe_b64decode(body + "==").decode()
    kind, sid, _offset = payload.split(":")
    moved = base64.urlsafe_b64encode(f"{kind}:{sid}:12".encode()).decode().rstrip("=")
    old_style = base64.urlsafe_b64encode(b"v1:0123456789abcdef:10").decode().rstrip("=")
    for bad in (f"{moved}.{tag}", old_style, cursor + "x", cursor[:-3], "", "zzz", 7, "a" * 500):
        err = c.request("prompts/list", {**envelope(), "cursor": bad})["error"]
        assert err["code"] == -32602, bad
        assert "stale" not in err["message"], bad  # forged is not stale
    res = c.request("resources/list", {**envelope(), "cursor": cursor})["error"]
    assert res["code"] == -32602 and "another list" in res["message"]


def test_cursors_are_the_same_on_every_server_sharing_a_key(kit_bundle: Path,
                                                            tmp_path: Path) -> None:
    key = tmp_path / "serve.key"
    key.write_bytes(os.urandom(48))
    args = ["--bundle", str(kit_bundle), "--page-size", "3"]
    one, two = RawClient([*args, "--key-file", str(key)], MODERN), RawClient(
        [*args, "--key-file", str(key)], MODERN)
    env_key = RawClient(args, MODERN, env={"PROMPTOPS_SERVE_KEY_FILE": str(key)})
    other = RawClient(args, MODERN)  # its own random key
    try:
        _, c1 = _names(one)
        _, c2 = _names(two)
        _, c3 = _names(env_key)
        _, c4 = _names(other)
        assert c1 == c2 == c3 and c1 != c4 and c1 is not None
        assert _names(two, c1) == _names(one, c1)  # one replica continues another's list
        err = other.request("prompts/list", {**envelope(), "cursor": c1})["error"]
        assert err["code"] == -32602 and "not issued by this server" in err["message"]
    finally:
        for c in (one, two, env_key, other):
            assert c.close()[0] == 0


def test_a_short_or_missing_key_file_is_a_usage_error(kit_bundle: Path, tmp_path: Path) -> None:
    short = tmp_path / "short.key"
    short.write_bytes(b"too short\n")
    for path in (short, tmp_path / "missing.key"):
        run = subprocess.run(serve_cmd("--bundle", str(kit_bundle), "--key-file", str(path)),
                             input=b"", capture_output=True, timeout=30)
        assert run.returncode == 2 and str(path).encode() in run.stderr and run.stdout == b""
