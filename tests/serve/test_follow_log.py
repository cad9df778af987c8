"""The follower's messages reach the client that asked for them, and only that client.

`promptops serve PATH` wires the follower's log to stderr and, through the server, to
every session-era session: a commit that does not build is news the client can show
(``error``), and so is the commit that builds again (``info``). A client that never sent
logging/setLevel hears ``info`` and above (issue 24: Claude Desktop sets no level, and
its author saw nothing); one that did hears what it asked for. With the stateless
revision there is no setLevel: a listen stream asks with its ``_meta`` logLevel
(tests/serve/test_log_notifications.py). A commit that builds but that lint refuses is
such news too: serve applies build's gate.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import git
from serve_helpers import RawClient, commit, kit_files

REV = "2025-11-25"
BAD = "messages:\n  - role: user\n    text: \"{{ unclosed\"\n"
# Loads and compiles (build --no-lint takes it), but lint says PO201: an undeclared variable.
UNDECLARED = "description: d\nmessages:\n  - role: user\n    text: \"Hi {{ nobody }}\"\n"
FIXED = "description: d\nmessages:\n  - role: user\n    text: \"Hi there\"\n"


def following(repo_factory: Callable[..., git.Repo]) -> tuple[git.Repo, RawClient]:
    """A fresh kit repository and `promptops serve` (the real entry point) following it."""
    repo = repo_factory(kit_files(extra_prompts=0))
    return repo, RawClient([str(Path(repo.working_tree_dir or "."))], REV)


def test_a_commit_that_does_not_build_is_logged_to_the_client(
        repo_factory: Callable[..., git.Repo]) -> None:
    repo, c = following(repo_factory)
    try:
        c.initialize(REV)
        assert c.request("logging/setLevel", {"level": "warning"})["result"] == {}
        commit(repo, {"prompts/bad.prompt.yaml": BAD}, "a template that does not parse")
        note = c.recv(timeout=30)
        assert note["method"] == "notifications/message", note
        assert note["params"]["level"] == "error" and note["params"]["logger"] == "promptops"
        assert "does not build" in note["params"]["data"]
        assert "bad.prompt.yaml" in note["params"]["data"]
        # still serving the last good set, and nothing else was sent meanwhile
        names = [p["name"] for p in c.request("prompts/list")["result"]["prompts"]]
        assert "bad" not in names and "code_review" in names
    finally:
        rc, err = c.close()
    assert rc == 0 and "does not build" in err  # stderr always has it


def test_without_a_level_the_client_hears_the_failure_and_the_recovery(
        repo_factory: Callable[..., git.Repo]) -> None:
    repo, c = following(repo_factory)
    try:
        c.initialize(REV)  # no logging/setLevel, as Claude Desktop
        commit(repo, {"prompts/bad.prompt.yaml": BAD}, "a template that does not parse")
        note = c.recv(timeout=30)
        assert note["method"] == "notifications/message", note
        assert note["params"]["level"] == "error"
        assert "does not build" in note["params"]["data"]
        assert "prompts/bad.prompt.yaml:3:" in note["params"]["data"]  # file:line:col
        good = commit(repo, {"prompts/bad.prompt.yaml": "messages:\n  - role: user\n"
                                                        "    text: ok\n"}, "fixed")
        note = c.recv(timeout=30)
        assert note["method"] == "notifications/message", note
        assert note["params"]["level"] == "info"
        assert f"commit {good[:12]} builds" in note["params"]["data"]
        assert c.recv(timeout=30) == {"jsonrpc": "2.0",
                                      "method": "notifications/prompts/list_changed"}
    finally:
        rc, err = c.close()
    assert rc == 0 and err.count("does not build") == 1


def test_set_level_is_respected(repo_factory: Callable[..., git.Repo]) -> None:
    """At ``error`` the recovery (``info``) is not sent: the first thing after the failure
    is the fixing commit's list_changed."""
    repo, c = following(repo_factory)
    try:
        c.initialize(REV)
        assert c.request("logging/setLevel", {"level": "error"})["result"] == {}
        commit(repo, {"prompts/bad.prompt.yaml": BAD}, "a template that does not parse")
        assert c.recv(timeout=30)["params"]["level"] == "error"
        commit(repo, {"prompts/bad.prompt.yaml": "messages:\n  - role: user\n    text: ok\n"},
               "fixed")
        assert c.recv(timeout=30) == {"jsonrpc": "2.0",
                                      "method": "notifications/prompts/list_changed"}
        assert c.request("logging/setLevel", {"level": "emergency"})["result"] == {}
        commit(repo, {"prompts/bad.prompt.yaml": BAD}, "broken again")
        time.sleep(1.0)  # the follower settles after 120 ms of quiet: it has tried this one
        commit(repo, {"prompts/bad.prompt.yaml": "messages:\n  - role: user\n    text: ok2\n"},
               "fixed again")
        assert c.recv(timeout=30) == {"jsonrpc": "2.0",
                                      "method": "notifications/prompts/list_changed"}
    finally:
        rc, err = c.close()
    assert rc == 0 and err.count("does not build") == 2


def test_a_commit_lint_refuses_is_not_served_until_it_is_fixed(
        repo_factory: Callable[..., git.Repo]) -> None:
    """build's gate (issue 15) is on by default: a commit lint refuses is not published, the
    refusal reaches the client's log, and the fixing commit is served."""
    repo, c = following(repo_factory)
    try:
        c.initialize(REV)
        before = [p["name"] for p in c.request("prompts/list")["result"]["prompts"]]
        assert c.request("logging/setLevel", {"level": "warning"})["result"] == {}
        bad = commit(repo, {"prompts/hello.prompt.yaml": UNDECLARED}, "lint error")
        note = c.recv(timeout=30)  # the refusal, not a list_changed
        assert note["method"] == "notifications/message", note
        data = note["params"]["data"]
        assert "lint fails" in data and "PO201" in data and bad[:12] in data, data
        names = [p["name"] for p in c.request("prompts/list")["result"]["prompts"]]
        assert names == before  # the last good set, unchanged
        commit(repo, {"prompts/hello.prompt.yaml": FIXED}, "fixed")
        assert c.recv(timeout=30) == {"jsonrpc": "2.0",
                                      "method": "notifications/prompts/list_changed"}
        names = [p["name"] for p in c.request("prompts/list")["result"]["prompts"]]
        assert sorted(names) == sorted([*before, "hello"])
    finally:
        rc, err = c.close()
    assert rc == 0 and "lint fails" in err, err
