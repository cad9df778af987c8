"""Swapping bundles under a live connection: one notification, one snapshot per request."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import git
from serve_helpers import RawClient, check_message, commit, envelope, kit_files

from promptops.pipeline.build import Build
from promptops.serve.connection import Connection as Server

MODERN = "2026-07-28"


def _two_commits(repo_factory: Callable[..., git.Repo]) -> tuple[dict[str, Any], dict[str, Any]]:
    repo = repo_factory(kit_files())
    root = Path(repo.working_tree_dir or ".")
    first = Build(root, "HEAD").bundle
    commit(repo, {"prompts/zz_new.prompt.yaml":
                        "messages:\n  - role: user\n    text: new\n"}, "add a prompt")
    return first, Build(root, "HEAD").bundle


def test_swap_notifies_each_listener_once(repo_factory: Callable[..., git.Repo]) -> None:
    first, second = _two_commits(repo_factory)
    sent: list[dict[str, Any]] = []
    legacy = Server([first], send=sent.append)
    legacy.handle({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"protocolVersion": "2025-06-18", "capabilities": {}}})
    assert legacy.swap([second]) is True and sent == []  # not yet initialized: silence
    legacy.handle({"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert legacy.swap([first]) is True
    assert legacy.swap([first]) is False  # same digests: nothing changed, nothing sent
    assert sent == [{"jsonrpc": "2.0", "method": "notifications/prompts/list_changed"}]
    check_message(sent[0], "2025-06-18", None)

    sent.clear()
    modern = Server([first], send=sent.append)
    for sid, wants in (("a", True), ("b", False), ("c", True)):
        acks = modern.handle({"jsonrpc": "2.0", "id": sid, "method": "subscriptions/listen",
                              "params": {**envelope(), "notifications":
                                         {"promptsListChanged": wants}}})
        check_message(acks[0], MODERN, None)
    modern.handle({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": "c"}})
    assert modern.swap([second]) is True
    assert [m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] for m in sent] == ["a"]
    for m in sent:
        check_message(m, MODERN, None)


def test_requests_during_swaps_see_one_bundle(repo_factory: Callable[..., git.Repo]) -> None:
    first, second = _two_commits(repo_factory)
    server = Server([first], send=lambda m: None, page_size=5)
    page = server.handle({"jsonrpc": "2.0", "id": 1, "method": "prompts/list",
                          "params": envelope()})[0]["result"]
    stop = threading.Event()

    def flip() -> None:
        while not stop.is_set():
            server.swap([second])
            server.swap([first])

    t = threading.Thread(target=flip)
    t.start()
    try:
        digests = {first["digest"], second["digest"]}
        for i in range(300):
            r = server.handle({"jsonrpc": "2.0", "id": i, "method": "prompts/get",
                               "params": {**envelope(), "name": "p00"}})[0]["result"]
            assert r["_meta"]["promptops/digest"] in digests
    finally:
        stop.set()
        t.join()
    server.swap([second])
    # a cursor from the replaced snapshot is stale: -32602, the client lists again
    again = server.handle({"jsonrpc": "2.0", "id": 2, "method": "prompts/list",
                           "params": {**envelope(), "cursor": page["nextCursor"]}})[0]["error"]
    assert again["code"] == -32602 and "stale cursor" in again["message"]


def test_path_mode_follows_a_commit(repo_factory: Callable[..., git.Repo]) -> None:
    repo = repo_factory(kit_files(extra_prompts=0))
    root = Path(repo.working_tree_dir or ".")
    c = RawClient([str(root)], "2025-11-25")
    try:
        c.initialize("2025-11-25")
        assert len(c.request("prompts/list")["result"]["prompts"]) == 3
        commit(repo, {"prompts/extra.prompt.yaml":
                            "messages:\n  - role: user\n    text: more\n"}, "more")
        note = c.recv(timeout=20)
        assert note == {"jsonrpc": "2.0", "method": "notifications/prompts/list_changed"}
        assert len(c.request("prompts/list")["result"]["prompts"]) == 4
    finally:
        rc, err = c.close()
        assert rc == 0, err
