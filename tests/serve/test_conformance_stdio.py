"""The MCP conformance suite's `server-stateless` and `caching` checks, over stdio.

The suite (@modelcontextprotocol/conformance, 0.2.0 alphas) drives servers over
Streamable HTTP only (`conformance server --url`) and needs Node 22, so it cannot run
against `promptops serve`. These are its checks that apply to a stdio prompts server,
restated check by check (the suite's check ids in the comments); HTTP status codes and
headers, and the checks that need the suite's diagnostic tools, do not apply. Every reply
is also validated against the official 2026-07-28 schema (RawClient).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from serve_helpers import RawClient

Raw = Callable[..., RawClient]
V = "2026-07-28"
CLIENT_INFO = {"name": "conformance-client", "version": "1.0.0"}
META = {"io.modelcontextprotocol/protocolVersion": V,
        "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
        "io.modelcontextprotocol/clientCapabilities": {}}


def _call(c: RawClient, method: str, params: dict[str, Any], rid: Any) -> Any:
    c.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
    reply = c.recv()
    assert reply["id"] == rid  # sep-2575-http-server-error-jsonrpc-id: ids are kept
    return reply


@pytest.mark.parametrize(("slug", "params"), [
    ("missing-meta", {}),
    ("missing-protocol-version", {"_meta": {
        "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
        "io.modelcontextprotocol/clientCapabilities": {}}}),
    ("missing-client-capabilities", {"_meta": {
        "io.modelcontextprotocol/protocolVersion": V,
        "io.modelcontextprotocol/clientInfo": CLIENT_INFO}}),
])
def test_request_meta_invalid(raw: Raw, slug: str, params: dict[str, Any]) -> None:
    # sep-2575-request-meta-invalid-<slug>
    c = raw(V)
    assert _call(c, "server/discover", params, 101)["error"]["code"] == -32602, slug


def test_discovery_and_capabilities(raw: Raw) -> None:
    c = raw(V)
    # sep-2575-request-meta-client-info-optional
    no_info = {k: v for k, v in META.items() if not k.endswith("clientInfo")}
    assert "result" in _call(c, "server/discover", {"_meta": no_info}, 105)
    # sep-2575-server-implements-discover, sep-2575-server-identifies-in-result-meta
    found = _call(c, "server/discover", {"_meta": META}, 201)["result"]
    assert found["supportedVersions"] and isinstance(found["capabilities"], dict)
    info = found["_meta"]["io.modelcontextprotocol/serverInfo"]
    assert info["name"] and info["version"]
    # sep-2575-server-declares-prompts-in-discover
    assert _call(c, "prompts/list", {"_meta": META}, 203)["result"]["prompts"]
    assert "prompts" in found["capabilities"]
    # sep-2575-discover-capabilities-match-handlers: no tools advertised, so -32601
    assert "tools" not in found["capabilities"]
    assert _call(c, "tools/list", {"_meta": META}, 202)["error"]["code"] == -32601
    # sep-2575-server-unsupported-version-error
    bad = {**META, "io.modelcontextprotocol/protocolVersion": "v999.0.0"}
    err = _call(c, "server/discover", {"_meta": bad}, 301)["error"]
    supported = err["data"]["supported"]
    assert supported and all(v in found["supportedVersions"] for v in supported)
    assert err["data"]["requested"] == "v999.0.0"


@pytest.mark.parametrize("method", ["initialize", "ping", "logging/setLevel",
                                    "resources/subscribe", "resources/unsubscribe",
                                    "unknown/method"])
def test_removed_and_unknown_methods(raw: Raw, method: str) -> None:
    # sep-2575-http-server-method-not-found-404-<method>, sep-2575-http-server-method-not-found-404
    first = raw(V)  # as the first request of a connection (each HTTP request is one)
    assert _call(first, method, {"_meta": META}, 500)["error"]["code"] == -32601
    later = raw(V)
    _call(later, "server/discover", {"_meta": META}, 1)
    assert _call(later, method, {"_meta": META}, 601)["error"]["code"] == -32601


def test_subscription_streams(raw: Raw) -> None:
    c = raw(V)
    c.send({"jsonrpc": "2.0", "id": "L", "method": "subscriptions/listen",
            "params": {"_meta": META, "notifications": {"toolsListChanged": True}}})
    ack = c.recv()  # acknowledged first, with the stream's subscription id
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "L"
    assert ack["params"]["notifications"] == {}  # nothing outside what we honour
    rc, _ = c.close()
    assert rc == 0 and c.recv()["id"] == "L"
    assert not any(m.get("method") == "notifications/message" for m in c.seen)  # no logLevel


def test_caching_hints(raw: Raw) -> None:
    # caching: sep-2549-{prompts,resources,resources-templates,resources-read}-...-caching-hints,
    # sep-2549-ttl-non-negative, sep-2549-cache-scope-valid. (tools/list is -32601 here: the
    # server offers no tools, which server-stateless requires it to say.)
    c = raw(V)
    results = [_call(c, m, {"_meta": META}, i)["result"] for i, m in enumerate(
        ["prompts/list", "resources/list", "resources/templates/list"])]
    uri = results[1]["resources"][0]["uri"]
    results.append(_call(c, "resources/read", {"_meta": META, "uri": uri}, 9)["result"])
    for r in results:
        assert isinstance(r["ttlMs"], int) and r["ttlMs"] >= 0
        assert r["cacheScope"] in ("public", "private")
