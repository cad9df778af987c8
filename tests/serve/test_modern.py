"""The stateless 2026-07-28 era over real pipes: envelope, discover, listen, MRTR."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from serve_helpers import RawClient, envelope

Raw = Callable[..., RawClient]
MODERN = "2026-07-28"
SERVER = "io.modelcontextprotocol/serverInfo"
SUB = "io.modelcontextprotocol/subscriptionId"


def test_discover_and_cacheable_results(raw: Raw) -> None:
    c = raw(MODERN, "--ttl-ms", "1234")
    r = c.request("server/discover", envelope())["result"]
    assert r["resultType"] == "complete" and r["supportedVersions"][0] == MODERN
    assert "2024-11-05" in r["supportedVersions"]
    assert r["capabilities"] == {"prompts": {"listChanged": True}, "completions": {},
                                 "resources": {}}
    assert r["ttlMs"] == 1234 and r["cacheScope"] == "public"
    assert r["_meta"][SERVER]["name"] == "promptops"
    assert r["instructions"] == "Use code_review for reviews."
    lst = c.request("prompts/list", envelope())["result"]
    assert lst["ttlMs"] == 1234 and lst["cacheScope"] == "public"
    assert lst["resultType"] == "complete" and "icons" in lst["prompts"][1]
    res = c.request("resources/list", envelope())["result"]
    assert res["ttlMs"] == 1234 and len(res["resources"]) == 3
    got = c.request("prompts/get", {**envelope(), "name": "code_review",
                                    "arguments": {"code": "x", "language": "go"}})["result"]
    assert got["resultType"] == "complete" and got["_meta"]["promptops/package"] == "kit"
    assert got["_meta"][SERVER]["name"] == "promptops"
    missing = c.request("resources/read", {**envelope(), "uri": "promptops://kit/x"})["error"]
    assert missing["code"] == -32602  # 2026-07-28 moved resource-not-found here
    comp = c.request("completion/complete", {
        **envelope(), "ref": {"type": "ref/prompt", "name": "code_review"},
        "argument": {"name": "language", "value": "R"}})["result"]
    assert comp["completion"]["values"] == ["rust"] and comp["resultType"] == "complete"


def test_first_request_without_discover_selects_modern(raw: Raw) -> None:
    c = raw(MODERN)
    assert c.request("prompts/list", envelope())["result"]["resultType"] == "complete"
    init = c.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}})
    assert init["error"]["code"] == -32601  # not part of the stateless lifecycle
    assert c.request("ping", envelope())["error"]["code"] == -32601
    assert c.request("logging/setLevel", {**envelope(), "level": "info"})["error"]["code"] == -32601


def test_a_first_request_with_half_the_envelope_is_told_what_it_lacks(raw: Raw) -> None:
    """Either envelope key opens the stateless era (docs/serve.md): a first request with
    clientCapabilities but no protocolVersion is -32602 naming it, not "not initialized"
    (found by test_properties' oracle); another reserved key alone decides nothing."""
    c = raw(MODERN)
    other = {"_meta": {"io.modelcontextprotocol/related-task": {"taskId": "t"}}}
    assert c.request("prompts/list", other)["error"]["code"] == -32600
    half = {"_meta": {"io.modelcontextprotocol/clientCapabilities": {}}}
    err = c.request("prompts/get", {**half, "name": "code_review"})["error"]
    assert err["code"] == -32602 and "protocolVersion" in err["message"]


def test_envelope_errors(raw: Raw) -> None:
    c = raw(MODERN)
    c.request("server/discover", envelope())
    err = c.request("prompts/list", {})["error"]
    assert err["code"] == -32602 and "_meta" in err["message"]
    no_caps = {"_meta": {"io.modelcontextprotocol/protocolVersion": MODERN}}
    err = c.request("prompts/list", no_caps)["error"]
    assert err["code"] == -32602 and "clientCapabilities" in err["message"]
    err = c.request("prompts/list", envelope(version="2025-11-25"))["error"]
    assert err["code"] == -32022
    assert err["data"]["requested"] == "2025-11-25" and MODERN in err["data"]["supported"]
    err = c.request("prompts/list", envelope(version="1900-01-01"))["error"]
    assert err["code"] == -32022
    err = c.request("server/discover", envelope(version="1900-01-01"))["error"]
    assert err["code"] == -32022


def test_cursors_invalid_and_paging(raw: Raw) -> None:
    c = raw(MODERN, "--page-size", "10")
    first = c.request("prompts/list", envelope())["result"]
    second = c.request("prompts/list", {**envelope(), "cursor": first["nextCursor"]})["result"]
    assert len(first["prompts"]) == 10 and len(second["prompts"]) == 5
    assert "nextCursor" not in second
    for bad in ["", "zzz", 7, "djE6eHh4OmFiYw"]:
        err = c.request("prompts/list", {**envelope(), "cursor": bad})["error"]
        assert err["code"] == -32602, bad


def test_mrtr_elicits_missing_arguments(raw: Raw) -> None:
    c = raw(MODERN)
    caps: dict[str, Any] = {"elicitation": {"form": {}}}
    r = c.request("prompts/get", {**envelope(caps), "name": "code_review",
                                  "arguments": {"language": "rust"}})["result"]
    assert r["resultType"] == "input_required"
    ask = r["inputRequests"]["arguments"]
    assert ask["method"] == "elicitation/create"
    schema = ask["params"]["requestedSchema"]
    assert schema["required"] == ["code"]
    assert schema["properties"]["code"] == {"type": "string", "title": "Code",
                                            "description": "The code to review.",
                                            "maxLength": 50}
    retry: dict[str, Any] = {
        **envelope(caps), "name": "code_review", "requestState": r["requestState"],
        "inputResponses": {"arguments": {"action": "accept", "content": {"code": "fn main(){}"}}},
    }
    done = c.request("prompts/get", retry)["result"]
    assert done["resultType"] == "complete"
    assert done["messages"][1]["content"]["text"] == "Review this rust code (pep8):\nfn main(){}"
    # nothing given at all: enum arguments become single-selects
    r = c.request("prompts/get", {**envelope({"elicitation": {}}), "name": "code_review"})
    props = r["result"]["inputRequests"]["arguments"]["params"]["requestedSchema"]["properties"]
    assert props["language"] == {"type": "string", "enum": ["python", "go", "rust", "Pascal"]}
    declined = {**retry, "inputResponses": {"arguments": {"action": "decline"}}}
    assert c.request("prompts/get", declined)["error"]["code"] == -32602
    forged = {**retry, "requestState": "!!"}
    assert c.request("prompts/get", forged)["error"]["code"] == -32602
    # without the capability: the plain validation error
    plain = c.request("prompts/get", {**envelope(), "name": "code_review"})["error"]
    assert plain["code"] == -32602 and "missing required argument" in plain["message"]


def test_listen_acknowledge_and_cancel(raw: Raw) -> None:
    c = raw(MODERN)
    c.send({"jsonrpc": "2.0", "id": "sub-1", "method": "subscriptions/listen",
            "params": {**envelope(), "notifications": {"promptsListChanged": True,
                                                       "toolsListChanged": True}}})
    ack = c.recv()
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert ack["params"] == {"_meta": {SUB: "sub-1"},
                             "notifications": {"promptsListChanged": True}}
    c.send({"jsonrpc": "2.0", "id": "sub-1", "method": "subscriptions/listen",
            "params": {**envelope(), "notifications": {}}})
    assert c.recv()["error"]["code"] == -32600  # that id is an open stream
    bad = c.request("subscriptions/listen", envelope())
    assert bad["error"]["code"] == -32602
    c.notify("notifications/cancelled", {"requestId": "sub-1"})
    c.send({"jsonrpc": "2.0", "id": "sub-2", "method": "subscriptions/listen",
            "params": {**envelope(), "notifications": {"promptsListChanged": True}}})
    assert c.recv()["params"]["_meta"] == {SUB: "sub-2"}
    rc, _ = c.close()  # an orderly end closes the open stream with its result
    assert rc == 0
    closing = c.recv()  # judged as a SubscriptionsListenResult
    assert closing["id"] == "sub-2" and closing["result"]["_meta"][SUB] == "sub-2"
