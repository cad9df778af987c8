"""The tool view over `promptops serve --http --tools`, judged by the official SDK clients.

The Python SDK (session era and 2026-07-28) and both TypeScript SDK clients list the tools
and call both shapes; each SDK checks ``structuredContent`` against the tool's
``outputSchema`` itself, so a result that breaks its own schema fails the call. A commit
reaches them as ``notifications/tools/list_changed``.
"""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import git
import httpx2
import pytest
from helpers.node import NODE_DEPS, npm_package
from helpers.repo import commit_files
from http_helpers import HttpServer
from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client

CLIENTS = Path(__file__).with_name("clients")
_counter = iter(range(1000))


@pytest.fixture(scope="module", params=["catalog", "per-prompt"])
def server(request: pytest.FixtureRequest, kit_dir: Path,
           tmp_path_factory: pytest.TempPathFactory,
           module_env: dict[str, str]) -> Iterator[tuple[HttpServer, str]]:
    shape = request.param
    srv = HttpServer([str(kit_dir), "--page-size", "4", "--tools", shape],
                     tmp_path_factory.mktemp("log") / "server.log", env=module_env)
    yield srv, shape
    assert srv.stop() == 0, srv.stderr()


def _commit(kit_dir: Path) -> None:
    n = next(_counter)
    commit_files(git.Repo(kit_dir), {f"prompts/tool{n:03d}.prompt.yaml":
                                     f"description: tool {n}\nmessages:\n  - role: user\n"
                                     f"    text: tool {n}\n"}, f"add tool{n:03d}")


async def _all_tools(c: Client) -> list[types.Tool]:
    tools: list[types.Tool] = []
    cursor = None
    while True:
        page = await c.list_tools(cursor=cursor) if cursor else await c.list_tools()
        tools += page.tools
        cursor = page.next_cursor
        if not cursor:
            return tools


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_python_sdk_calls_both_shapes(server: tuple[HttpServer, str], mode: str) -> None:
    srv, shape = server

    async def run() -> None:
        async with httpx2.AsyncClient(timeout=30) as http, Client(
                streamable_http_client(srv.url, http_client=http), mode=mode,
                cache=None) as c:
            tools = {t.name: t for t in await _all_tools(c)}
            args = {"code": "x", "language": "go"}
            if shape == "catalog":
                assert sorted(tools) == ["get_prompt", "list_prompts"]
                res = await c.call_tool("get_prompt", {"name": "code_review", "arguments": args})
                listed = await c.call_tool("list_prompts", {})
                assert listed.structured_content and listed.structured_content["prompts"]
                bad = await c.call_tool("get_prompt", {"name": "code_review",
                                                       "arguments": {"code": "x"}})
            else:
                assert "code_review" in tools and "list_prompts" not in tools
                schema = tools["code_review"].input_schema
                assert schema["required"] == ["code", "language"]
                res = await c.call_tool("code_review", args)
                bad = await c.call_tool("code_review", {"code": "x"})
            tool = tools["get_prompt" if shape == "catalog" else "code_review"]
            assert tool.output_schema and tool.annotations and tool.annotations.read_only_hint
            assert not res.is_error and res.structured_content is not None
            msgs = res.structured_content["messages"]
            assert msgs[1]["content"]["text"] == "Review this go code (pep8):\nx"
            assert res.meta and res.meta["promptops/package"] == "kit"
            assert bad.is_error and "language" in bad.content[0].text  # type: ignore[union-attr]

    asyncio.run(run())


def test_python_sdk_hears_tools_list_changed(server: tuple[HttpServer, str],
                                             kit_dir: Path) -> None:
    srv, _ = server

    async def run() -> None:
        changed = asyncio.Event()

        async def on_message(message: Any) -> None:
            if isinstance(message, types.ToolListChangedNotification):
                changed.set()

        async with httpx2.AsyncClient(timeout=30) as http, Client(
                streamable_http_client(srv.url, http_client=http), mode="legacy",
                message_handler=on_message, cache=None) as c:
            assert await _all_tools(c)
            await asyncio.sleep(0.3)  # the client opens its GET stream after initialized
            await asyncio.to_thread(_commit, kit_dir)
            async with asyncio.timeout(10):
                await changed.wait()

        async with httpx2.AsyncClient(timeout=30) as http, Client(
                streamable_http_client(srv.url, http_client=http), mode="auto",
                cache=None) as c, c.listen(tools_list_changed=True) as sub:
            await asyncio.to_thread(_commit, kit_dir)
            async with asyncio.timeout(10):
                async for event in sub:
                    assert type(event).__name__ == "ToolsListChanged", event
                    break

    asyncio.run(run())


def _node(*args: str, until_ready: bool = False) -> str:
    npm_package("@modelcontextprotocol/sdk", "1.32.2")
    npm_package("@modelcontextprotocol/client", "2.4.0")
    env = {"NODE_PATH": str(NODE_DEPS / "node_modules"), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(["node", str(CLIENTS / "tools.mjs"), *args], capture_output=True,
                          text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.mark.parametrize("which", ["v1", "v2-legacy", "v2-auto"])
def test_typescript_sdks_call_both_shapes(server: tuple[HttpServer, str], which: str) -> None:
    srv, shape = server
    out = _node(srv.url, which)
    assert "readonly true" in out, out
    assert 'structured ["assistant","user"]' in out, out
    assert "text Review this go code (pep8):\\nx" in out and "meta kit" in out, out
    assert "bad true" in out and "language" in out, out
    listed = next(line for line in out.splitlines() if line.startswith("tools "))
    if shape == "catalog":
        assert listed == "tools list_prompts get_prompt"
    else:
        assert "code_review" in listed.split() and "list_prompts" not in listed


@pytest.mark.parametrize("which", ["v1", "v2-auto"])
def test_typescript_sdks_hear_tools_list_changed(server: tuple[HttpServer, str],
                                                 kit_dir: Path, which: str) -> None:
    srv, _ = server
    npm_package("@modelcontextprotocol/sdk", "1.32.2")
    npm_package("@modelcontextprotocol/client", "2.4.0")
    proc = subprocess.Popen(["node", str(CLIENTS / "tools.mjs"), srv.url, which,
                             "--wait-change"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True,
                            env={"NODE_PATH": str(NODE_DEPS / "node_modules"),
                                 "PATH": "/usr/bin:/bin"})
    assert proc.stdout is not None
    try:
        for line in proc.stdout:
            if line.strip() == "ready":
                break
        _commit(kit_dir)
        out, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0 and "tools_list_changed" in out, out
