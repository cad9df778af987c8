"""The HTTP transport's own rules, with raw requests against a real server.

Spec rules per revision (docs/http.md lists them): Origin/Host protection, sessions
(400 missing, 404 unknown or deleted or expired or someone else's), the 2026-07-28 header
rules (-32020), versions (-32022), bounds (413, 429, 409), Last-Event-ID replay, cache
headers, and the error statuses of stateless replies.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from http_helpers import JSON_ACCEPT, META, HttpServer, initialize, modern, post

from promptops.pipeline.build import Build
from promptops.pipeline.bundle import serialise


@pytest.fixture(scope="module")
def bundle(kit_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("b") / "kit.bundle.json"
    path.write_bytes(serialise(Build(kit_dir, "HEAD").bundle))
    return path


@pytest.fixture(scope="module")
def server(bundle: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    srv = HttpServer(["--bundle", str(bundle), "--page-size", "4", "--max-streams", "3",
                      "--max-body", "100000", "--session-idle", "1s",
                      "--allow-origin", "https://app.example.com"],
                     tmp_path_factory.mktemp("log") / "server.log")
    yield srv
    assert srv.stop() == 0, srv.stderr()


def test_foreign_origin_is_refused(server: HttpServer) -> None:
    body, headers = modern("prompts/list")
    r = post(server.url, body, {**headers, "origin": "http://evil.example.com"})
    assert r.status_code == 403 and "Origin" in r.json()["error"]["message"]
    for ok in ("https://app.example.com", "http://localhost:3000", "http://127.0.0.1:9"):
        assert post(server.url, body, {**headers, "origin": ok}).status_code == 200, ok


def test_foreign_host_is_refused_on_loopback(server: HttpServer) -> None:
    # DNS rebinding: a name that resolves to 127.0.0.1 but is not ours
    body, headers = modern("prompts/list")
    r = post(server.url, body, {**headers, "host": "evil.example.com"})
    assert r.status_code == 403
    assert post(server.url, body, {**headers, "host": f"localhost:{server.port}"}
                ).status_code == 200


def test_sessions_missing_unknown_deleted(server: HttpServer) -> None:
    call = {"jsonrpc": "2.0", "id": 5, "method": "prompts/list", "params": {}}
    assert post(server.url, call).status_code == 400  # no Mcp-Session-Id
    assert post(server.url, call, {"mcp-session-id": "nope"}).status_code == 404
    sid = initialize(server.url)
    assert sid.isascii() and all(0x21 <= ord(c) <= 0x7E for c in sid) and len(sid) >= 32
    r = post(server.url, call, {"mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"})
    assert r.status_code == 200 and len(r.json()["result"]["prompts"]) == 4
    assert "mcp-session-id" not in r.headers
    bad = post(server.url, call, {"mcp-session-id": sid, "mcp-protocol-version": "1999-01-01"})
    assert bad.status_code == 400
    assert httpx2.delete(server.url, headers={"mcp-session-id": sid}).status_code == 200
    assert post(server.url, call, {"mcp-session-id": sid}).status_code == 404


def test_sessions_expire_after_idle_time(server: HttpServer) -> None:
    sid = initialize(server.url)
    call = {"jsonrpc": "2.0", "id": 5, "method": "ping"}
    for _ in range(4):  # activity keeps it alive past the idle time (1 s)
        time.sleep(0.4)
        assert post(server.url, call, {"mcp-session-id": sid}).status_code == 200
    time.sleep(1.8)  # idle: gone
    assert post(server.url, call, {"mcp-session-id": sid}).status_code == 404


def test_batches_only_on_2025_03_26(server: HttpServer) -> None:
    old = initialize(server.url, version="2025-03-26")
    batch = [{"jsonrpc": "2.0", "id": 1, "method": "ping"},
             {"jsonrpc": "2.0", "id": 2, "method": "prompts/list"}]
    r = post(server.url, batch, {"mcp-session-id": old})
    assert r.status_code == 200 and [m["id"] for m in r.json()] == [1, 2]
    new = initialize(server.url)
    r = post(server.url, batch, {"mcp-session-id": new})
    assert r.json()["error"]["code"] == -32600


def test_modern_header_rules(server: HttpServer) -> None:
    body, headers = modern("prompts/get", {"name": "code_review",
                                           "arguments": {"code": "x", "language": "go"}},
                           rid=7, name="code_review")
    ok = post(server.url, body, headers)
    assert ok.status_code == 200 and ok.json()["result"]["messages"]
    assert ok.headers["cache-control"] == "no-store"  # prompts/get is not cacheable
    encoded = {**headers, "mcp-name": "=?base64?Y29kZV9yZXZpZXc=?="}
    assert post(server.url, body, encoded).status_code == 200
    for broken in ({"mcp-name": "media"}, {"mcp-method": "prompts/list"},
                   {"mcp-name": None}, {"mcp-method": None}, {"mcp-method": "Prompts/Get"},
                   {"mcp-protocol-version": None}):
        h = {k: v for k, v in {**headers, **broken}.items() if v is not None}
        r = post(server.url, body, h)
        assert r.status_code == 400, broken
        assert r.json() == {"jsonrpc": "2.0", "id": 7, "error": r.json()["error"]}
        assert r.json()["error"]["code"] == -32020, broken
    # a legacy header over a modern body is a mismatch, not a session request
    r = post(server.url, body, {**headers, "mcp-protocol-version": "2025-11-25"})
    assert r.status_code == 400 and r.json()["error"]["code"] == -32020
    assert "mcp-session-id" not in r.headers


def test_modern_versions_meta_and_statuses(server: HttpServer) -> None:
    body, headers = modern("prompts/list")
    body["params"]["_meta"] = {**META, "io.modelcontextprotocol/protocolVersion": "v999.0.0"}
    r = post(server.url, body, {**headers, "mcp-protocol-version": "v999.0.0"})
    assert r.status_code == 400 and r.json()["error"]["code"] == -32022
    assert "2026-07-28" in r.json()["error"]["data"]["supported"]
    no_meta = {"jsonrpc": "2.0", "id": 3, "method": "server/discover", "params": {}}
    r = post(server.url, no_meta, headers | {"mcp-method": "server/discover"})
    assert r.status_code == 400 and r.json()["error"]["code"] == -32602
    for removed in ("initialize", "ping", "logging/setLevel", "tools/list"):
        b, h = modern(removed)
        r = post(server.url, b, h)
        assert r.status_code == 404 and r.json()["error"]["code"] == -32601, removed
    b, h = modern("prompts/get", {"name": "nope"}, name="nope")
    r = post(server.url, b, h)
    assert r.status_code == 400 and r.json()["error"]["code"] == -32602
    # a notification is accepted without a body, and without the request headers
    note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    r = post(server.url, note, {"mcp-protocol-version": "2026-07-28"})
    assert r.status_code == 202 and r.content == b""
    # a session id on a modern request is ignored and never echoed
    b, h = modern("prompts/list")
    r = post(server.url, b, {**h, "mcp-session-id": "whatever"})
    assert r.status_code == 200 and "mcp-session-id" not in r.headers


def test_modern_cache_headers_follow_ttl(server: HttpServer) -> None:
    b, h = modern("prompts/list")
    r = post(server.url, b, h)
    result = r.json()["result"]
    assert result["ttlMs"] == 60000 and result["cacheScope"] == "public"
    assert r.headers["cache-control"] == "public, max-age=60"


def test_get_and_delete_and_other_verbs(server: HttpServer) -> None:
    r = httpx2.get(server.url, headers={"accept": "text/event-stream",
                                        "mcp-protocol-version": "2026-07-28"})
    assert r.status_code == 405
    assert httpx2.get(server.url, headers={"accept": "text/event-stream"}).status_code == 400
    assert httpx2.put(server.url, content=b"{}").status_code == 405
    r = httpx2.post(server.url, content=b"{}", headers={"content-type": "text/plain"})
    assert r.status_code == 415
    r = httpx2.post(server.url, content=b"{not json", headers=JSON_ACCEPT)
    assert r.status_code == 400 and r.json()["error"]["code"] == -32700


def test_body_size_limit(server: HttpServer) -> None:
    b, h = modern("prompts/list", {"pad": "x" * 200_000})
    r = post(server.url, b, h)
    assert r.status_code == 413


def _sse_events(resp: Any, count: int, timeout: float = 10) -> list[tuple[str | None, Any]]:
    events: list[tuple[str | None, Any]] = []
    eid, deadline = None, time.monotonic() + timeout
    for line in resp.iter_lines():
        if line.startswith("id: "):
            eid = line[4:]
        elif line.startswith("data: "):
            events.append((eid, json.loads(line[6:])))
            eid = None
            if len(events) >= count:
                return events
        assert time.monotonic() < deadline
    return events


def test_one_get_stream_per_session_and_stream_bound(server: HttpServer) -> None:
    sid = initialize(server.url)
    sse = {"accept": "text/event-stream", "mcp-session-id": sid}
    with httpx2.Client(timeout=10) as c, c.stream("GET", server.url, headers=sse) as first:
        assert first.status_code == 200
        assert first.headers["content-type"] == "text/event-stream"
        second = c.get(server.url, headers=sse)
        assert second.status_code == 409
        # the per-client bound (--max-streams 3): two more streams fit, the next is 429
        extra = [initialize(server.url) for _ in range(3)]
        with c.stream("GET", server.url, headers={**sse, "mcp-session-id": extra[0]}) as a, \
                c.stream("GET", server.url, headers={**sse, "mcp-session-id": extra[1]}) as b:
            assert a.status_code == b.status_code == 200
            r = c.get(server.url, headers={**sse, "mcp-session-id": extra[2]})
            assert r.status_code == 429


def test_listen_stream_ack_first_then_cancel_by_close(server: HttpServer) -> None:
    b, h = modern("subscriptions/listen", {"notifications": {"promptsListChanged": True,
                                                             "toolsListChanged": True}}, rid=41)
    with httpx2.Client(timeout=10) as c, c.stream("POST", server.url, content=json.dumps(b),
                                                 headers=h) as resp:
        assert resp.status_code == 200 and resp.headers["x-accel-buffering"] == "no"
        [(_, ack)] = _sse_events(resp, 1)
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert ack["params"]["notifications"] == {"promptsListChanged": True}
    assert ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 41


def test_http_disconnect_ends_the_stream(server: HttpServer) -> None:
    # three listen streams closed by their clients free their places under the bound
    for _ in range(5):
        test_listen_stream_ack_first_then_cancel_by_close(server)
        time.sleep(0.05)


def test_health_ready_metrics(server: HttpServer) -> None:
    b, h = modern("prompts/list")
    assert post(server.url, b, h).status_code == 200  # this worker's server may be fresh
    assert httpx2.get(server.base + "/healthz").json() == {"status": "ok"}
    assert httpx2.get(server.base + "/readyz").status_code == 200
    text = httpx2.get(server.base + "/metrics").text
    assert "promptops_http_requests_total" in text and "promptops_bundle_info{" in text
    assert 'method="prompts/list"' in text and "promptops_http_open_streams" in text


def test_access_log_is_json_without_arguments(server: HttpServer) -> None:
    b, h = modern("prompts/get", {"name": "code_review", "arguments": {
        "code": "SECRET-ARGUMENT", "language": "go"}}, name="code_review")
    assert post(server.url, b, h).status_code == 200
    time.sleep(0.2)
    lines = [json.loads(x) for x in server.stderr().splitlines() if x.startswith("{")]
    assert any(e.get("rpc") == "prompts/get" and e["status"] == 200 for e in lines)
    assert "SECRET-ARGUMENT" not in server.stderr()


def test_refuses_a_port_in_use(bundle: Path, tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        with pytest.raises(AssertionError, match="exited"):
            HttpServer(["--bundle", str(bundle)], tmp_path / "log", port=port)
