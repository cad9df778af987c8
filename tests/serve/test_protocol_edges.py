"""Protocol edge cases real clients hit, over real pipes, every reply judged by the schema."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

from serve_helpers import RawClient, envelope

Raw = Callable[..., RawClient]
MODERN = "2026-07-28"
CAPS: dict[str, Any] = {"elicitation": {"form": {}}}


def test_wrong_jsonrpc_version_still_answers_the_id(raw: Raw) -> None:
    for rev in ("2025-11-25", "2024-11-05"):
        c = raw(rev)
        c.initialize(rev)
        for rid in (41, "forty-two"):
            c.send({"jsonrpc": "1.0", "id": rid, "method": "ping"})
            reply = c.recv()
            assert reply["id"] == rid and reply["error"]["code"] == -32600
        c.send({"jsonrpc": "1.0", "id": 1.5, "method": "ping"})  # not a valid id: unknown
        reply = c.recv()
        assert reply["error"]["code"] == -32600 and reply.get("id") is None


def test_cancelled_with_any_request_id_is_ignored_quietly(raw: Raw) -> None:
    c = raw(MODERN)
    c.send({"jsonrpc": "2.0", "id": "s", "method": "subscriptions/listen",
            "params": {**envelope(), "notifications": {"promptsListChanged": True}}})
    c.recv()
    for rid in ([1, 2], {"a": 1}, None, 2.5, True):
        c.notify("notifications/cancelled", {"requestId": rid})
    assert c.request("prompts/list", envelope())["result"]["prompts"]
    rc, err = c.close()
    assert rc == 0 and "Traceback" not in err and "internal error" not in err
    assert c.recv()["id"] == "s"  # the listen was not cancelled by any of them


def test_initialize_with_the_2026_envelope_is_method_not_found(raw: Raw) -> None:
    c = raw(MODERN)
    init = c.request("initialize", {**envelope(), "protocolVersion": MODERN,
                                    "capabilities": {}, "clientInfo": {"name": "x",
                                                                       "version": "1"}})
    assert init["error"]["code"] == -32601 and "not part of revision 2026-07-28" in init[
        "error"]["message"]
    # the connection is in the stateless era now: discover works, initialize stays -32601
    assert c.request("server/discover", envelope())["result"]["supportedVersions"][0] == MODERN
    for method in ("initialize", "ping", "logging/setLevel", "resources/subscribe",
                   "resources/unsubscribe", "unknown/method"):
        err = c.request(method, envelope())["error"]
        assert err["code"] == -32601, method


def test_method_not_found_says_what_is_true(raw: Raw) -> None:
    c = raw(MODERN)
    err = c.request("tools/list", envelope())["error"]
    assert err["code"] == -32601 and "offers no tools" in err["message"]
    assert "not part of" not in err["message"]  # tools/list is part of 2026-07-28
    err = c.request("tools/call", {**envelope(), "name": "x"})["error"]
    assert "offers no tools" in err["message"]
    err = c.request("sampling/createMessage", envelope())["error"]
    assert "a server sends to its client" in err["message"]
    h = raw("2025-11-25")
    h.initialize("2025-11-25")
    assert "offers no tools" in h.request("tools/list")["error"]["message"]
    assert "offers no tasks" in h.request("tasks/list")["error"]["message"]
    assert "offers no resource subscriptions" in h.request(
        "resources/subscribe", {"uri": "promptops://kit/notes/guide.md"})["error"]["message"]
    assert "not part of revision 2025-11-25" in h.request("server/discover")["error"]["message"]


def test_every_2026_cacheable_result_carries_ttl_and_scope(raw: Raw) -> None:
    c = raw(MODERN, "--ttl-ms", "777")
    calls = [("server/discover", {}), ("prompts/list", {}), ("resources/list", {}),
             ("resources/templates/list", {}),
             ("resources/read", {"uri": "promptops://kit/notes/guide.md"}),
             ("resources/read", {"uri": "promptops://kit/assets/pixel.png"})]
    for method, params in calls:
        result = c.request(method, {**envelope(), **params})["result"]  # schema-judged
        assert result["ttlMs"] == 777 and result["cacheScope"] == "public", method
    read = c.seen[-2]["result"]
    assert read["contents"] == [{"uri": "promptops://kit/notes/guide.md",
                                 "mimeType": "text/markdown", "text": "# Guide\nBe kind.\n"}]


def _first_round(c: RawClient) -> dict[str, Any]:
    r = c.request("prompts/get", {**envelope(CAPS), "name": "code_review",
                                  "arguments": {"language": "rust"}})["result"]
    assert r["resultType"] == "input_required"
    return r


def _retry(state: Any) -> dict[str, Any]:
    return {**envelope(CAPS), "name": "code_review", "requestState": state,
            "inputResponses": {"arguments": {"action": "accept", "content": {"code": "x"}}}}


def test_request_state_is_authenticated(raw: Raw) -> None:
    c = raw(MODERN)
    state = _first_round(c)["requestState"]
    assert c.request("prompts/get", _retry(state))["result"]["resultType"] == "complete"
    # the unsigned form the server used to accept, naming other arguments
    forged = base64.urlsafe_b64encode(json.dumps(
        {"prompt": "code_review", "arguments": {"language": "go", "style": "evil"}}
    ).encode()).decode().rstrip("=")
    _body, _, tag = state.partition(".")
    swapped = base64.urlsafe_b64encode(json.dumps(
        {"prompt": "code_review", "arguments": {"language": "go"}}).encode()).decode().rstrip("=")
    for bad in (forged, f"{swapped}.{tag}", state + "-TAMPERED", state[:-2], "", "." * 3,
                state.replace(".", "")):
        err = c.request("prompts/get", _retry(bad))["error"]
        assert err["code"] == -32602 and "not issued by this server" in err["message"], bad
    other = raw(MODERN)  # another process has another key: its states are not ours
    err = other.request("prompts/get", _retry(state))["error"]
    assert err["code"] == -32602


def test_nested_request_state_is_invalid_params_not_a_crash(raw: Raw) -> None:
    c = raw(MODERN)
    deep = "[" * 50_000 + "]" * 50_000
    for payload in (deep, '{"prompt": "code_review", "arguments": ' + deep[:2000] + "}"):
        state = base64.urlsafe_b64encode(payload.encode()).decode()
        err = c.request("prompts/get", _retry(state))["error"]
        assert err["code"] == -32602
    err = c.request("prompts/get", _retry({"nested": {"state": [1, 2]}}))["error"]
    assert err["code"] == -32602
    rc, stderr = c.close()
    assert rc == 0 and "Traceback" not in stderr


def test_first_round_arguments_must_be_strings(raw: Raw) -> None:
    c = raw(MODERN)
    err = c.request("prompts/get", {**envelope(CAPS), "name": "code_review",
                                    "arguments": {"language": ["rust"]}})["error"]
    assert err["code"] == -32602 and err["data"] == {"argument": "language"}
