"""Every malformed 2026-07-28 envelope or header mismatch is still refused, each as before.

The stateless request path was made cheaper (docs/benchmarks.md, HTTP section); this
module pins what it refuses, one case per check, against a real server: the HTTP status,
the JSON-RPC code, the id echoed when it is valid, and no result. The table was checked
against the code before the change too (the same assertions pass on main fb203cd).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from http_helpers import JSON_ACCEPT, META, V26, HttpServer

from promptops.pipeline.build import Build
from promptops.pipeline.bundle import serialise

MISMATCH, UNSUPPORTED, INVALID_PARAMS, INVALID_REQUEST = -32020, -32022, -32602, -32600
GET = {"name": "code_review", "arguments": {"code": "x", "language": "go"}}


@pytest.fixture(scope="module")
def server(kit_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    path = tmp_path_factory.mktemp("b") / "kit.bundle.json"
    path.write_bytes(serialise(Build(kit_dir, "HEAD").bundle))
    srv = HttpServer(["--bundle", str(path)], tmp_path_factory.mktemp("log") / "server.log")
    yield srv
    assert srv.stop() == 0, srv.stderr()


def _b64(text: str | bytes) -> str:
    raw = text.encode() if isinstance(text, str) else text
    return "=?base64?" + base64.b64encode(raw).decode() + "?="


def _request(method: str = "prompts/get", params: Any = None, meta: Any = META,
             rid: Any = 9) -> dict[str, Any]:
    p = dict(GET if params is None and method == "prompts/get" else params or {})
    if meta is not None:
        p["_meta"] = meta
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": p}


def _headers(method: str = "prompts/get", name: str | None = "code_review",
             **changes: str | None) -> dict[str, str]:
    h = {**JSON_ACCEPT, "mcp-protocol-version": V26, "mcp-method": method}
    if name is not None:
        h["mcp-name"] = name
    h.update({k.replace("_", "-"): v for k, v in changes.items() if v is not None})
    for k in [k for k, v in changes.items() if v is None]:
        h.pop(k.replace("_", "-"), None)
    return h


# (case, body, headers, HTTP status, JSON-RPC code)
CASES: list[tuple[str, Any, dict[str, str], int, int]] = [
    ("a batch", [_request()], _headers(), 400, INVALID_REQUEST),
    ("no MCP-Protocol-Version", _request(), _headers(mcp_protocol_version=None), 400, MISMATCH),
    ("header and _meta revisions differ", _request(meta={**META,
     "io.modelcontextprotocol/protocolVersion": "2025-11-25"}), _headers(), 400, MISMATCH),
    ("a legacy header over a modern body", _request(),
     _headers(mcp_protocol_version="2025-11-25"), 400, MISMATCH),
    ("an unknown revision in both", _request(meta={
        **META, "io.modelcontextprotocol/protocolVersion": "2099-01-01"}),
     _headers(mcp_protocol_version="2099-01-01"), 400, UNSUPPORTED),
    ("a session revision in both", _request(meta={
        **META, "io.modelcontextprotocol/protocolVersion": "2025-11-25"}),
     _headers(mcp_protocol_version="2025-11-25"), 400, UNSUPPORTED),
    ("no Mcp-Method", _request(), _headers(mcp_method=None), 400, MISMATCH),
    ("another Mcp-Method", _request(), _headers(mcp_method="prompts/list"), 400, MISMATCH),
    ("Mcp-Method in another case", _request(), _headers(mcp_method="Prompts/Get"), 400,
     MISMATCH),
    ("no Mcp-Name", _request(), _headers(name=None), 400, MISMATCH),
    ("another Mcp-Name", _request(), _headers(name="media"), 400, MISMATCH),
    ("Mcp-Name in another case", _request(), _headers(name="Code_Review"), 400, MISMATCH),
    ("Mcp-Name base64 of another name", _request(), _headers(name=_b64("media")), 400,
     MISMATCH),
    ("Mcp-Name invalid base64", _request(), _headers(name="=?base64?**?="), 400, MISMATCH),
    ("Mcp-Name base64 of bytes that are not UTF-8", _request(), _headers(name=_b64(b"\xff")),
     400, MISMATCH),
    ("no Mcp-Name on resources/read", _request("resources/read", {"uri": "promptops://x"}),
     _headers("resources/read", name=None), 400, MISMATCH),
    ("no _meta", _request(meta=None), _headers(), 400, INVALID_PARAMS),
    ("_meta not an object", _request(meta=["x"]), _headers(), 400, INVALID_PARAMS),
    ("_meta without clientCapabilities", _request(meta={
        "io.modelcontextprotocol/protocolVersion": V26}), _headers(), 400, INVALID_PARAMS),
    ("_meta without protocolVersion", _request(meta={
        "io.modelcontextprotocol/clientCapabilities": {}}), _headers(), 400, INVALID_PARAMS),
    ("clientCapabilities not an object", _request(meta={
        **META, "io.modelcontextprotocol/clientCapabilities": "all"}), _headers(), 400,
     INVALID_PARAMS),
    ("jsonrpc not 2.0", {**_request(), "jsonrpc": "1.0"}, _headers(), 400, INVALID_REQUEST),
    ("params not an object", {"jsonrpc": "2.0", "id": 9, "method": "prompts/list",
                              "params": ["x"]}, _headers("prompts/list", name=None), 400,
     INVALID_PARAMS),
]


@pytest.mark.parametrize(("case", "body", "headers", "status", "code"), CASES,
                         ids=[c[0] for c in CASES])
def test_stateless_request_is_refused(server: HttpServer, case: str, body: Any,
                                      headers: dict[str, str], status: int, code: int) -> None:
    r = httpx2.post(server.url, content=json.dumps(body), headers=headers, timeout=10)
    assert r.status_code == status, (case, r.text)
    reply = r.json()
    assert "result" not in reply and reply["error"]["code"] == code, (case, reply)
    if code == MISMATCH:
        assert reply["error"]["message"].startswith("Header mismatch"), reply
    if isinstance(body, dict):
        assert reply["id"] == 9, reply
    assert "mcp-session-id" not in r.headers  # never mistaken for a session request


def test_the_same_request_with_its_headers_is_answered(server: HttpServer) -> None:
    """The cases above fail for their one defect: the request itself is good."""
    for name in ("code_review", _b64("code_review")):
        r = httpx2.post(server.url, content=json.dumps(_request()), headers=_headers(name=name),
                        timeout=10)
        assert r.status_code == 200 and r.json()["result"]["messages"], r.text


@pytest.mark.parametrize("rid", [1.5, True], ids=["float", "bool"])
def test_an_invalid_id_is_not_echoed(server: HttpServer, rid: object) -> None:
    # a bool is no int to JSON-RPC: the stateless exchange's shortcut to a Request must
    # leave it to jsonrpc.read, as every other id that is not an int or a str
    r = httpx2.post(server.url, content=json.dumps(_request(rid=rid)), headers=_headers(),
                    timeout=10)
    assert r.status_code == 400 and r.json()["error"]["code"] == INVALID_REQUEST, r.text
    assert "id" not in r.json()
