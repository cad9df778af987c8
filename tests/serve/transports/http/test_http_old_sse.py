"""The 2024-11-05 HTTP+SSE transport (GET /sse + POST /messages) with the Python SDK's client."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from helpers.serve import prompt_names
from http_helpers import HttpServer
from mcp import ClientSession, types
from mcp.client.sse import sse_client
from mcp.shared.exceptions import MCPError

from promptops.pipeline.build import Build
from promptops.pipeline.bundle import serialise


@pytest.fixture(scope="module")
def server(kit_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    tmp = tmp_path_factory.mktemp("old-sse")
    bundle = tmp / "kit.bundle.json"
    bundle.write_bytes(serialise(Build(kit_dir, "HEAD").bundle))
    srv = HttpServer(["--bundle", str(bundle), "--page-size", "4"], tmp / "server.log")
    yield srv
    assert srv.stop() == 0, srv.stderr()


def test_python_sdk_sse_client(server: HttpServer) -> None:
    async def run() -> None:
        async with sse_client(server.base + "/sse") as (read, write), \
                ClientSession(read, write) as s:
            init = await s.initialize()
            assert init.capabilities.prompts is not None
            names = await prompt_names(s)
            assert len(names) == 15
            got = await s.get_prompt("code_review", {"code": "x", "language": "go"})
            assert got.messages[1].content.text == "Review this go code (pep8):\nx"  # type: ignore[union-attr]
            comp = await s.complete(types.PromptReference(type="ref/prompt", name="code_review"),
                                    {"name": "language", "value": "g"})
            assert comp.completion.values == ["go"]
            with pytest.raises(MCPError) as err:
                await s.get_prompt("nope", {})
            assert err.value.error.code == -32602

    asyncio.run(run())


def test_messages_need_a_live_session(server: HttpServer) -> None:
    url = server.base + "/messages/"
    body = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
    assert httpx2.post(url, content=body).status_code == 400
    assert httpx2.post(url + "?session_id=nope", content=body).status_code == 404
    assert httpx2.post(server.base + "/sse", content=body).status_code == 405
    r = httpx2.get(server.base + "/sse", headers={"origin": "http://evil.example.com"})
    assert r.status_code == 403
