"""`promptops serve PATH` applies build's gate (issue 15): a commit whose lint has errors is
not published. The process under test is the real entry point (`python -m promptops serve`),
so this proves the gate is on by default, not only that the follower can take one
(tests/follow/test_follow_gate.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import git
from serve_helpers import RawClient, commit, kit_files

REV = "2025-11-25"
# Loads and compiles (build --no-lint takes it), but lint says PO201: an undeclared variable.
UNDECLARED = "description: d\nmessages:\n  - role: user\n    text: \"Hi {{ nobody }}\"\n"
FIXED = "description: d\nmessages:\n  - role: user\n    text: \"Hi there\"\n"


def test_a_commit_lint_refuses_is_not_served_until_it_is_fixed(
        repo_factory: Callable[..., git.Repo]) -> None:
    repo = repo_factory(kit_files(extra_prompts=0))
    root = Path(repo.working_tree_dir or ".")
    c = RawClient([str(root)], REV)
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
