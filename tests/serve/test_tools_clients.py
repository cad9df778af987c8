"""The tool view over stdio and HTTP, judged by the official Python SDK and by fastmcp's client.

``promptops serve --tools`` follows a real repository's HEAD; each client lists the tools
and calls them (both SDKs check ``structuredContent`` against the tool's ``outputSchema``),
sees a caller's mistake as a tool error, and hears ``notifications/tools/list_changed``
after a commit. fastmcp is the tool-only client the issue names: its ``call_tool`` is what an
agent framework built on it calls.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import git
import pytest
from fastmcp import Client as FastClient
from fastmcp.client.transports import StdioTransport
from fastmcp.exceptions import ToolError
from helpers.node import NODE_DEPS, npm_package
from helpers.repo import commit_files
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from serve_helpers import kit_files, serve_cmd

TS_TOOLS = Path(__file__).parent / "transports" / "http" / "clients" / "tools.mjs"
ARGS = {"code": "x", "language": "go"}
TEXT = "Review this go code (pep8):\nx"


def _repo(repo_factory: Any) -> Path:
    return Path(repo_factory(kit_files(extra_prompts=2)).working_tree_dir)


def _params(root: Path, shape: str) -> StdioServerParameters:
    cmd = serve_cmd(str(root), "--tools", shape)
    return StdioServerParameters(command=cmd[0], args=cmd[1:], env=dict(os.environ))


@pytest.mark.parametrize("modern", [False, True])
def test_python_sdk_over_stdio_both_shapes_and_list_changed(repo_factory: Any,
                                                            modern: bool) -> None:
    root = _repo(repo_factory)

    async def run(shape: str) -> None:
        changed = asyncio.Event()

        async def on_message(message: Any) -> None:
            if isinstance(message, types.ToolListChangedNotification):
                changed.set()

        async with (stdio_client(_params(root, shape)) as (read, write),
                    ClientSession(read, write, message_handler=on_message) as s):
            if modern:
                await s.discover()
                assert s.protocol_version == "2026-07-28"
            else:
                init = await s.initialize()
                assert init.capabilities.tools is not None
            tools = {t.name: t for t in (await s.list_tools()).tools}
            if shape == "catalog":
                res = await s.call_tool("get_prompt", {"name": "code_review", "arguments": ARGS})
                bad = await s.call_tool("get_prompt", {"name": "nope"})
            else:
                assert tools["code_review"].input_schema["properties"]["language"]["enum"]
                res = await s.call_tool("code_review", ARGS)
                bad = await s.call_tool("code_review", {"code": "x", "language": "cobol"})
            assert not res.is_error and res.structured_content is not None
            assert res.structured_content["messages"][1]["content"]["text"] == TEXT
            assert bad.is_error
            if not modern:  # the session's own stream hears the commit
                await asyncio.to_thread(commit_files, git.Repo(root), {
                    f"prompts/{shape}.prompt.yaml":
                    "messages:\n  - role: user\n    text: hi\n"}, f"add {shape}")
                async with asyncio.timeout(15):
                    await changed.wait()
                names = {t.name for t in (await s.list_tools()).tools}
                assert shape in names or shape == "catalog"

    for shape in ("catalog", "per-prompt"):
        asyncio.run(run(shape))


@pytest.mark.parametrize("which", ["v1", "v2-legacy", "v2-auto"])
@pytest.mark.parametrize("shape", ["catalog", "per-prompt"])
def test_typescript_sdks_over_stdio(repo_factory: Any, which: str, shape: str) -> None:
    npm_package("@modelcontextprotocol/sdk", "1.32.2")
    npm_package("@modelcontextprotocol/client", "2.4.0")
    root = _repo(repo_factory)
    env = {**os.environ, "NODE_PATH": str(NODE_DEPS / "node_modules")}
    done = subprocess.run(["node", str(TS_TOOLS), "stdio", which, "--",
                           *serve_cmd(str(root), "--tools", shape)],
                          capture_output=True, text=True, timeout=90, env=env)
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert "readonly true" in out and 'structured ["assistant","user"]' in out, out
    assert "text Review this go code (pep8):\\nx" in out and "bad true" in out, out


def test_fastmcp_client_over_stdio(repo_factory: Any) -> None:
    root = _repo(repo_factory)
    cmd = serve_cmd(str(root), "--tools", "per-prompt")

    async def run() -> None:
        async with FastClient(StdioTransport(cmd[0], cmd[1:], env=dict(os.environ))) as c:
            tools = {t.name: t for t in await c.list_tools()}
            assert "code_review" in tools and tools["code_review"].output_schema
            res = await c.call_tool("code_review", ARGS)
            assert res.structured_content is not None
            assert res.structured_content["messages"][1]["content"]["text"] == TEXT
            with pytest.raises(ToolError, match="language"):
                await c.call_tool("code_review", {"code": "x"})
            prompts = await c.list_prompts()  # the prompt view is still there beside it
            assert "code_review" in {p.name for p in prompts}

    asyncio.run(run())


def test_fastmcp_client_over_http(repo_factory: Any, tmp_path: Path) -> None:
    sys.path.insert(0, str(Path(__file__).parent / "transports" / "http"))
    from http_helpers import HttpServer

    root = _repo(repo_factory)
    srv = HttpServer([str(root), "--tools"], tmp_path / "server.log")
    try:
        async def run() -> None:
            async with FastClient(srv.url) as c:
                names = [t.name for t in await c.list_tools()]
                assert names == ["list_prompts", "get_prompt"]
                res = await c.call_tool("get_prompt", {"name": "code_review",
                                                       "arguments": ARGS})
                assert res.structured_content is not None
                assert res.structured_content["messages"][1]["content"]["text"] == TEXT
                listed = await c.call_tool("list_prompts", {})
                assert listed.structured_content is not None
                assert "code_review" in {p["name"] for p in listed.structured_content["prompts"]}

        asyncio.run(run())
    finally:
        assert srv.stop() == 0, srv.stderr()
