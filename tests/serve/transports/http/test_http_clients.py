"""The official SDK clients as judges of `promptops serve --http`, in both eras.

One server per module follows the kit package's HEAD; a commit made by a test reaches
the clients as `list_changed` (a session's GET stream, or a 2026-07-28 listen stream).
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
from test_sdk import _code  # tests/serve: the error code of an SDK call

CLIENTS = Path(__file__).with_name("clients")


@pytest.fixture(scope="module")
def server(kit_dir: Path, tmp_path_factory: pytest.TempPathFactory,
           module_env: dict[str, str]) -> Iterator[HttpServer]:
    srv = HttpServer([str(kit_dir), "--page-size", "4"],
                     tmp_path_factory.mktemp("log") / "server.log", env=module_env)
    yield srv
    assert srv.stop() == 0, srv.stderr()


_counter = iter(range(1000))


def _commit(kit_dir: Path) -> None:
    n = next(_counter)
    commit_files(git.Repo(kit_dir), {f"prompts/new{n:03d}.prompt.yaml":
                                     f"description: new {n}\nmessages:\n  - role: user\n"
                                     f"    text: new {n}\n"}, f"add new{n:03d}")


async def _exercise(c: Client) -> None:
    names, cursor = [], None
    while True:
        page = await c.list_prompts(cursor=cursor) if cursor else await c.list_prompts()
        names += [p.name for p in page.prompts]
        cursor = page.next_cursor
        if not cursor:
            break
    assert "code_review" in names and len(names) >= 15 and names == sorted(names)
    got = await c.get_prompt("code_review", {"code": "x", "language": "go"})
    assert got.messages[1].content.text == "Review this go code (pep8):\nx"  # type: ignore[union-attr]
    comp = await c.complete(types.PromptReference(type="ref/prompt", name="code_review"),
                            {"name": "language", "value": "g"})
    assert comp.completion.values == ["go"]
    assert await _code(c.get_prompt("nope", {})) == -32602
    assert await _code(c.get_prompt("broken", {})) == -32603


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_python_sdk_list_get_complete(server: HttpServer, mode: str) -> None:
    async def run() -> str:
        async with httpx2.AsyncClient(timeout=30) as http, Client(
                streamable_http_client(server.url, http_client=http), mode=mode,
                cache=None) as c:
            await _exercise(c)
            return str(c.protocol_version)

    version = asyncio.run(run())
    assert version == ("2025-11-25" if mode == "legacy" else "2026-07-28")


def test_python_sdk_legacy_list_changed(server: HttpServer, kit_dir: Path) -> None:
    async def run() -> None:
        changed = asyncio.Event()

        async def on_message(message: Any) -> None:
            if isinstance(message, types.PromptListChangedNotification):
                changed.set()

        async with httpx2.AsyncClient(timeout=30) as http, Client(
                streamable_http_client(server.url, http_client=http), mode="legacy",
                message_handler=on_message, cache=None) as c:
            before = len((await c.list_prompts()).prompts)
            assert before
            await asyncio.sleep(0.3)  # the client opens its GET stream after initialized
            await asyncio.to_thread(_commit, kit_dir)
            async with asyncio.timeout(10):
                await changed.wait()

    asyncio.run(run())


def test_python_sdk_listen_list_changed(server: HttpServer, kit_dir: Path) -> None:
    async def run() -> None:
        async with httpx2.AsyncClient(timeout=30) as http, Client(
                streamable_http_client(server.url, http_client=http), mode="auto",
                cache=None) as c:
            assert c.protocol_version == "2026-07-28"
            async with c.listen(prompts_list_changed=True) as sub:
                await asyncio.to_thread(_commit, kit_dir)
                async with asyncio.timeout(10):
                    async for event in sub:
                        assert isinstance(event, types.PromptListChangedNotification) or \
                            "ListChanged" in type(event).__name__
                        break
            listed = [p.name for p in (await c.list_prompts()).prompts]
            assert listed

    asyncio.run(run())


def _node(script: str, *args: str, timeout: float = 60) -> str:
    done = subprocess.run(["node", str(CLIENTS / script), *args], capture_output=True,
                          text=True, timeout=timeout, env={"NODE_PATH": str(NODE_DEPS /
                                                                            "node_modules"),
                                                           "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_typescript_sdk_v1(server: HttpServer, kit_dir: Path) -> None:
    npm_package("@modelcontextprotocol/sdk", "1.32.2")
    out = _node("ts_v1.mjs", server.url)
    assert "protocol 2025-11-25" in out and "session " in out
    assert "get assistant,user" in out and 'complete ["go"]' in out
    assert "unknown -32602" in out and "deleted" in out


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_typescript_sdk_v2(server: HttpServer, kit_dir: Path, mode: str) -> None:
    npm_package("@modelcontextprotocol/client", "2.4.0")
    out = _node("ts_v2.mjs", server.url, mode)
    want = "2025-11-25" if mode == "legacy" else "2026-07-28"
    assert f"protocol {want}" in out, out
    assert "get assistant,user" in out and 'complete ["go"]' in out
    assert "unknown -32602" in out


def _node_until_ready(script: str, *args: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen(["node", str(CLIENTS / script), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True,
                            env={"NODE_PATH": str(NODE_DEPS / "node_modules"),
                                 "PATH": "/usr/bin:/bin"})
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.strip() == "ready":
            return proc
    raise AssertionError(f"the client ended before it was ready (exit {proc.wait()})")


@pytest.mark.parametrize(("script", "args"), [("ts_v1.mjs", ["--wait-change"]),
                                              ("ts_v2.mjs", ["auto", "--listen"])])
def test_typescript_sdk_list_changed(server: HttpServer, kit_dir: Path, script: str,
                                     args: list[str]) -> None:
    npm_package("@modelcontextprotocol/sdk", "1.32.2")
    npm_package("@modelcontextprotocol/client", "2.4.0")
    proc = _node_until_ready(script, server.url, *args)
    try:
        _commit(kit_dir)
        out, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, out
    assert "list_changed" in out
    if script == "ts_v2.mjs":  # tagged with its subscription, closed by the client
        assert "io.modelcontextprotocol/subscriptionId" in out and "closed local" in out


def test_last_event_id_resumes_the_get_stream(server: HttpServer, kit_dir: Path) -> None:
    import json
    import time

    from http_helpers import initialize

    sid = initialize(server.url)
    sse = {"accept": "text/event-stream", "mcp-session-id": sid}

    def first_event(resp: httpx2.Response) -> tuple[str, dict[str, Any]]:
        eid = ""
        for line in resp.iter_lines():
            if line.startswith("id: "):
                eid = line[4:]
            elif line.startswith("data: ") and line[6:].strip():
                return eid, json.loads(line[6:])
        raise AssertionError("stream ended")

    with httpx2.Client(timeout=15) as c:
        with c.stream("GET", server.url, headers=sse) as resp:
            time.sleep(0.2)
            _commit(kit_dir)
            eid, note = first_event(resp)
        assert note["method"] == "notifications/prompts/list_changed" and eid
        _commit(kit_dir)  # while no stream is open: kept in the replay window
        time.sleep(1.5)
        with c.stream("GET", server.url, headers={**sse, "last-event-id": eid}) as resp:
            again, note = first_event(resp)
        assert int(again) > int(eid) and note["method"] == "notifications/prompts/list_changed"
