"""The serve core as a transport sees it: many sessions over one catalog, in process.

What stdio cannot show (it has one session per process) and an HTTP transport relies
on: sessions of both eras side by side over one Catalog, each hearing a swap exactly
once on each of its streams, each with its own era, revision, log level and listen ids,
and a closed session hearing nothing more. Also the table-derived parts of the core and
the one place where failures below the protocol get their JSON-RPC code.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import git
import pytest
from serve_helpers import check_message, commit, envelope, kit_files

from promptops.pipeline.build import Build
from promptops.serve.catalog import LIST_CHANGED, Catalog, NameCollision
from promptops.serve.methods import METHODS, SERVER_INFO, capabilities, not_found
from promptops.serve.revisions import LATEST_STATELESS, SESSION_REVISIONS, Era
from promptops.serve.server import Server
from promptops.serve.session import Session

SUB = "io.modelcontextprotocol/subscriptionId"
SERVER = "io.modelcontextprotocol/serverInfo"


@pytest.fixture
def bundles(repo_factory: Callable[..., git.Repo]) -> tuple[dict[str, Any], dict[str, Any]]:
    repo = repo_factory(kit_files(extra_prompts=2))
    root = Path(repo.working_tree_dir or ".")
    first = Build(root, "HEAD").bundle
    commit(repo, {"prompts/zz_new.prompt.yaml": "messages:\n  - role: user\n    text: new\n"},
           "add a prompt")
    return first, Build(root, "HEAD").bundle


def _request(server: Server, session: Session, id_: Any, method: str,
             params: dict[str, Any]) -> list[Any]:
    return server.handle(session, {"jsonrpc": "2.0", "id": id_, "method": method,
                                   "params": params})


def _legacy(server: Server, sent: list[Any], revision: str = "2025-06-18") -> Session:
    session = server.open(sent.append)
    [reply] = _request(server, session, 0, "initialize",
                       {"protocolVersion": revision, "capabilities": {}})
    assert reply["result"]["protocolVersion"] == revision
    server.handle(session, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    return session


def _listen(server: Server, sent: list[Any], id_: Any) -> Session:
    session = server.open(sent.append)
    [ack] = _request(server, session, id_, "subscriptions/listen",
                     {**envelope(), "notifications": {"promptsListChanged": True}})
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert ack["params"]["_meta"][SUB] == id_
    return session


def test_many_sessions_over_one_catalog_hear_each_swap_once(
        bundles: tuple[dict[str, Any], dict[str, Any]]) -> None:
    first, second = bundles
    server = Server(Catalog([first]))
    legacy_a: list[Any] = []
    legacy_b: list[Any] = []
    modern_a: list[Any] = []
    modern_b: list[Any] = []
    a = _legacy(server, legacy_a, "2025-06-18")
    _legacy(server, legacy_b, "2024-11-05")
    listen_a = _listen(server, modern_a, 1)
    _listen(server, modern_b, 1)  # the same id in another session is another stream
    assert a.era is Era.SESSION and listen_a.era is Era.STATELESS

    assert server.swap([second]) is True
    assert legacy_a == legacy_b == [{"jsonrpc": "2.0", "method": LIST_CHANGED}]
    assert modern_a == modern_b == [{"jsonrpc": "2.0", "method": LIST_CHANGED,
                                     "params": {"_meta": {SUB: 1}}}]
    for note in (*legacy_a, *modern_a):
        check_message(note, "2025-06-18" if "params" not in note else LATEST_STATELESS, None)

    # a closed session ends its streams and hears nothing more; the others still do
    finals = server.close(listen_a)
    assert [f["id"] for f in finals] == [1] and finals[0]["result"]["resultType"] == "complete"
    check_message(finals[0], LATEST_STATELESS, "subscriptions/listen")
    assert server.close(a) == []  # a session-era session has no listen streams to end
    [late] = _request(server, listen_a, 2, "subscriptions/listen",  # answered after the end
                      {**envelope(), "notifications": {"promptsListChanged": True}})
    assert late["error"] == {"code": -32600, "message": "the session has ended"}
    for sent in (legacy_a, legacy_b, modern_a, modern_b):
        sent.clear()
    assert server.swap([first]) is True
    assert legacy_a == modern_a == []
    assert len(legacy_b) == len(modern_b) == 1
    assert server.swap([first]) is False  # the same digests: nobody is told
    assert len(legacy_b) == len(modern_b) == 1


def test_sessions_keep_their_own_state(bundles: tuple[dict[str, Any], dict[str, Any]]) -> None:
    first, _ = bundles
    server = Server(Catalog([first]))
    loud: list[Any] = []
    quiet: list[Any] = []
    listening: list[Any] = []
    a = _legacy(server, loud, "2025-11-25")
    b = _legacy(server, quiet, "2025-03-26")
    _listen(server, listening, "x")
    assert _request(server, a, 1, "logging/setLevel", {"level": "warning"})[0]["result"] == {}
    assert _request(server, b, 1, "logging/setLevel", {"level": "error"})[0]["result"] == {}
    server.log("warning", "a reload failed")
    assert [m["params"]["data"] for m in loud] == ["a reload failed"]
    assert quiet == [] and listening == []  # below b's level; no logLevel on the stream
    # one session's era and revision decide its own replies only
    assert a.revision == "2025-11-25" and b.revision == "2025-03-26"
    batch = [{"jsonrpc": "2.0", "id": 7, "method": "ping"}]
    assert server.handle(b, batch) == [[{"jsonrpc": "2.0", "id": 7, "result": {}}]]
    [refused] = server.handle(a, batch)
    assert refused["error"]["code"] == -32600 and "2025-03-26" in refused["error"]["message"]


def test_a_colliding_swap_keeps_the_last_good_snapshot(
        bundles: tuple[dict[str, Any], dict[str, Any]]) -> None:
    first, second = bundles
    catalog = Catalog([first])
    same = "'broken' is defined by both package 'kit' and package 'kit'"
    with pytest.raises(NameCollision, match=same):
        catalog.swap([first, second])
    assert catalog.snapshot.digests == {first["digest"]}
    with pytest.raises(NameCollision) as caught:
        Catalog([first, first])
    assert caught.value.exit_code == 1  # docs/serve.md: a set that cannot be served


def test_failures_below_the_protocol_get_their_codes_in_one_place(
        bundles: tuple[dict[str, Any], dict[str, Any]]) -> None:
    """What the renderer, the cursors and requestState raise, as the spec's errors."""
    first, _ = bundles
    server = Server(Catalog([first]))
    session = server.open(lambda m: None)
    meta = envelope({"elicitation": {}})

    def err(method: str, params: dict[str, Any]) -> dict[str, Any]:
        [reply] = _request(server, session, 1, method, {**meta, **params})
        check_message(reply, LATEST_STATELESS, method)
        return dict(reply["error"])

    bad_arg = err("prompts/get", {"name": "code_review",
                                  "arguments": {"code": "x", "language": "go", "nope": "1"}})
    assert bad_arg["code"] == -32602 and bad_arg["data"] == {"argument": "nope"}
    assert err("prompts/get", {"name": "broken"})["code"] == -32603  # the template's fault
    forged = err("prompts/get", {"name": "code_review", "requestState": "abc.def"})
    assert forged["code"] == -32602 and "not issued by this server" in forged["message"]
    assert "data" not in forged
    cursor = err("prompts/list", {"cursor": "abc.def"})
    assert cursor["code"] == -32602 and "invalid cursor" in cursor["message"]
    unknown = err("completion/complete", {"ref": {"type": "ref/prompt", "name": "nope"},
                                          "argument": {"name": "a", "value": ""}})
    assert unknown == {"code": -32602, "message": "unknown prompt 'nope'"}


def test_the_table_decides_eras_capabilities_and_not_found(
        bundles: tuple[dict[str, Any], dict[str, Any]]) -> None:
    first, _ = bundles
    server = Server(Catalog([first]))
    for name, method in METHODS.items():
        for era in Era:
            session = server.open(lambda m: None)
            if era is Era.SESSION:
                _request(server, session, 0, "initialize",
                         {"protocolVersion": SESSION_REVISIONS[0], "capabilities": {}})
                params: dict[str, Any] = {}
            else:
                params = envelope()
            [reply] = _request(server, session, 1, name, params)
            code = reply.get("error", {}).get("code")
            assert (code != -32601) == (era in method.eras), (name, era, reply)
            server.close(session)
    snap = server.catalog.snapshot
    assert list(capabilities(snap, "2024-11-05")) == ["prompts", "logging", "resources"]
    assert list(capabilities(snap, "2025-03-26")) == [
        "prompts", "completions", "logging", "resources"]
    assert list(capabilities(snap, LATEST_STATELESS)) == ["prompts", "completions", "resources"]
    assert not_found("server/discover", "2025-06-18") == (
        "method 'server/discover' is not part of revision 2025-06-18 (negotiated with "
        "initialize)")
    assert not_found("tools/list", LATEST_STATELESS) == (
        "this server offers no tools (it serves prompts): 'tools/list'")
    assert not_found("tasks/get", "2025-06-18").startswith("method 'tasks/get' is not part")
    assert not_found("tasks/get", "2025-11-25").startswith("this server offers no tasks")
    assert not_found("x" * 200, "2025-06-18") == f"unknown method {'x' * 100 + '...'!r}"


def test_log_levels_by_default_by_setlevel_and_by_listen_meta(
        bundles: tuple[dict[str, Any], dict[str, Any]]) -> None:
    """Issue 24: a session-era client that set no level hears ``info`` and above (the
    spec lets the server choose; Claude Desktop sets none); a 2026-07-28 listen stream
    hears exactly what its request's ``_meta`` logLevel asked for, tagged with its id."""
    first, _ = bundles
    server = Server(Catalog([first]))
    default: list[Any] = []
    chosen: list[Any] = []
    streamed: list[Any] = []
    _legacy(server, default, "2025-11-25")
    c = _legacy(server, chosen, "2025-06-18")
    assert _request(server, c, 1, "logging/setLevel", {"level": "debug"})[0]["result"] == {}
    session = server.open(streamed.append)
    meta = envelope()
    meta["_meta"]["io.modelcontextprotocol/logLevel"] = "error"
    [ack] = _request(server, session, "s1", "subscriptions/listen",
                     {**meta, "notifications": {"promptsListChanged": True}})
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    for level in ("debug", "info", "error"):
        server.log(level, f"at {level}")
    assert [m["params"]["data"] for m in default] == ["at info", "at error"]
    assert [m["params"]["data"] for m in chosen] == ["at debug", "at info", "at error"]
    assert streamed == [{"jsonrpc": "2.0", "method": "notifications/message",
                         "params": {"level": "error", "logger": "promptops", "data": "at error",
                                    "_meta": {SUB: "s1"}}}]
    meta["_meta"]["io.modelcontextprotocol/logLevel"] = "loud"
    [bad] = _request(server, server.open(streamed.append), "s2", "subscriptions/listen",
                     {**meta, "notifications": {}})
    assert bad["error"]["code"] == -32602 and "loud" in bad["error"]["message"]


def test_a_stateless_get_carries_its_bundles_meta_and_server_info_across_swaps(
        bundles: tuple[dict[str, Any], dict[str, Any]]) -> None:
    """The stateless era's `_meta` of a get (the bundle's traceability, then serverInfo)
    is made once per bundle and shared: each reply has its bundle's keys in order, a new
    snapshot's commit after a swap, and no reply can change what the next one gets."""
    first, second = bundles
    server = Server(Catalog([first]))
    get = {**envelope(), "name": "code_review", "arguments": {"code": "x", "language": "go"}}
    metas = []
    for bundle in (first, first, second, first):
        server.swap([bundle])
        snap = server.catalog.snapshot
        [out] = server.stateless({"jsonrpc": "2.0", "id": 1, "method": "prompts/get",
                                  "params": get}, ({}, LATEST_STATELESS))
        meta = out["result"]["_meta"]
        assert list(meta.items()) == [*snap.metas[snap.index["code_review"].slot].items(),
                                      (SERVER, SERVER_INFO)]
        assert meta["promptops/commit"] == bundle["source"]["commit"]
        with pytest.raises(TypeError):
            meta["promptops/commit"] = "changed"
        metas.append(meta)
    assert metas[0] is metas[1]  # one bundle, one snapshot: made once
    assert metas[2]["promptops/commit"] != metas[3]["promptops/commit"]
