"""`serve --http --repo URL --channel production`: two replicas following one bare remote;
a `promote --push` and a `rollback --push` from a developer's clone reach an official
Python SDK client as `list_changed` and both replicas agree within one poll."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from helpers.node import NODE_DEPS, npm_package
from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client
from serve.transports.http.http_helpers import HttpServer
from test_channel_serve import _cli, released

POLL = "1s"


@pytest.fixture
def setup(tmp_path: Path) -> Iterator[tuple[Path, list[HttpServer]]]:
    dev = tmp_path / "dev"
    released(dev)  # production is at demo@1.0.0, in dev only
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "clone", "-q", "--mirror", str(dev), str(bare)], check=True)
    subprocess.run(["git", "-C", str(dev), "remote", "add", "origin", str(bare)], check=True)
    replicas = [HttpServer(["--repo", f"file://{bare}@main", "--poll", POLL,
                            "--channel", "production"], tmp_path / f"r{i}.log",
                           env={"XDG_CACHE_HOME": str(tmp_path / f"cache{i}")})
                for i in range(2)]
    try:
        yield dev, replicas
    finally:
        for r in replicas:
            assert r.stop() == 0, r.stderr()


async def _text(url: str) -> tuple[str, dict[str, Any]]:
    async with httpx2.AsyncClient(timeout=30) as http, Client(
            streamable_http_client(url, http_client=http), mode="legacy", cache=None) as c:
        got = await c.get_prompt("greet", {"topic": "t"})
        data = got.model_dump(by_alias=True)
        return data["messages"][0]["content"]["text"], data["_meta"]


async def _agree(replicas: list[HttpServer], want: str, within: float) -> None:
    """Every replica serves ``want`` within ``within`` seconds."""
    deadline = time.monotonic() + within
    for r in replicas:
        while (await _text(r.url))[0] != want:
            assert time.monotonic() < deadline, r.stderr()
            await asyncio.sleep(0.1)


def test_promote_and_rollback_reach_sdk_clients_and_every_replica(
        setup: tuple[Path, list[HttpServer]]) -> None:
    dev, replicas = setup

    async def run() -> list[tuple[str, dict[str, Any]]]:
        changed = asyncio.Event()
        seen = []

        async def on_message(message: Any) -> None:
            if isinstance(message, types.PromptListChangedNotification):
                changed.set()

        async with httpx2.AsyncClient(timeout=30) as http, Client(
                streamable_http_client(replicas[0].url, http_client=http), mode="legacy",
                message_handler=on_message, cache=None) as c:

            async def get() -> None:
                got = await c.get_prompt("greet", {"topic": "t"})
                data = got.model_dump(by_alias=True)
                seen.append((data["messages"][0]["content"]["text"], data["_meta"]))

            await get()
            await asyncio.sleep(0.3)  # the client opens its GET stream after initialized
            for command, want in ((["promote", "1.0.1", "--to", "production", "--push",
                                    "origin"], "Howdy t"),
                                  (["rollback", "production", "--push", "origin"], "Hello t")):
                await asyncio.to_thread(_cli, dev, *command)
                async with asyncio.timeout(10):
                    await changed.wait()
                changed.clear()
                await get()
                await _agree(replicas, want, within=3.0)  # one 1 s poll, and the build
        return seen

    seen = asyncio.run(run())
    assert [t for t, _ in seen] == ["Hello t", "Howdy t", "Hello t"]
    assert [m["promptops/version"] for _, m in seen] == ["1.0.0", "1.0.1", "1.0.0"]
    assert {m["promptops/channel"] for _, m in seen} == {"production"}


def test_typescript_sdk_client_sees_a_promote(tmp_path: Path) -> None:
    npm_package("@modelcontextprotocol/sdk", "1.32.2")
    root = tmp_path / "repo"
    released(root)
    server = HttpServer([str(root), "--channel", "production"], tmp_path / "server.log",
                        env={"XDG_CACHE_HOME": str(tmp_path / "cache")})
    try:
        proc = subprocess.Popen(["node", str(Path(__file__).with_name("ts_channel.mjs")),
                                 server.url], stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True,
                                env={"NODE_PATH": str(NODE_DEPS / "node_modules"),
                                     "PATH": "/usr/bin:/bin"})
        assert proc.stdout is not None
        lines = []
        for line in proc.stdout:
            lines.append(line.strip())
            if line.strip() == "ready":
                break
        _cli(root, "promote", "1.0.1", "--to", "production")
        out, _ = proc.communicate(timeout=30)
    finally:
        assert server.stop() == 0, server.stderr()
    lines += out.splitlines()
    assert proc.returncode == 0, lines
    assert lines == ["text Hello t channel production version 1.0.0", "ready", "list_changed",
                     "text Howdy t channel production version 1.0.1"]


def test_one_process_serves_several_channels_each_at_its_own_endpoint(tmp_path: Path) -> None:
    """Issue 27 item 5: `--channel production --channel staging` in one team server; a
    promote of staging reaches the staging endpoint's SDK client as list_changed, and
    production's client hears nothing and keeps its text."""
    root = tmp_path / "repo"
    released(root)  # production: demo@1.0.0
    _cli(root, "promote", "1.0.0", "--to", "staging")
    server = HttpServer([str(root), "--channel", "production", "--channel", "staging"],
                        tmp_path / "server.log", env={"XDG_CACHE_HOME": str(tmp_path / "c")})
    staging_url = f"{server.base}/channels/staging/mcp"

    async def run() -> dict[str, Any]:
        heard: dict[str, int] = {"production": 0, "staging": 0}
        staged = asyncio.Event()

        def handler(name: str) -> Any:
            async def on_message(message: Any) -> None:
                if isinstance(message, types.PromptListChangedNotification):
                    heard[name] += 1
                    if name == "staging":
                        staged.set()
            return on_message

        async with httpx2.AsyncClient(timeout=30) as http, Client(
                streamable_http_client(server.url, http_client=http), mode="legacy",
                message_handler=handler("production"), cache=None) as prod, Client(
                streamable_http_client(staging_url, http_client=http), mode="legacy",
                message_handler=handler("staging"), cache=None) as stage:

            async def text(c: Any) -> tuple[str, dict[str, Any]]:
                got = (await c.get_prompt("greet", {"topic": "t"})).model_dump(by_alias=True)
                return got["messages"][0]["content"]["text"], got["_meta"]

            before = (await text(prod), await text(stage))
            await asyncio.sleep(0.3)  # the clients open their GET streams after initialized
            await asyncio.to_thread(_cli, root, "promote", "1.0.1", "--to", "staging")
            async with asyncio.timeout(10):
                await staged.wait()
            await asyncio.sleep(1.0)  # time for a stray notification to production
            after = (await text(prod), await text(stage))
            alias = await _text(f"{server.base}/channels/production/mcp")
            async with httpx2.AsyncClient(timeout=10) as plain:
                ready = (await plain.get(f"{server.base}/readyz")).status_code
                missing = (await plain.get(f"{server.base}/channels/canary/mcp")).status_code
        return {"before": before, "after": after, "heard": heard, "alias": alias,
                "ready": ready, "missing": missing}

    try:
        got = asyncio.run(run())
    finally:
        assert server.stop() == 0, server.stderr()
    (p0, s0), (p1, s1) = got["before"], got["after"]
    assert (p0[0], s0[0], p1[0], s1[0]) == ("Hello t", "Hello t", "Hello t", "Howdy t")
    assert (p1[1]["promptops/channel"], s1[1]["promptops/channel"]) == ("production", "staging")
    assert s1[1]["promptops/version"] == "1.0.1" and p1[1]["promptops/version"] == "1.0.0"
    assert got["heard"] == {"production": 0, "staging": 1}
    assert got["alias"][1]["promptops/channel"] == "production"
    assert got["ready"] == 200 and got["missing"] == 404
    assert "channel staging over HTTP at" in server.log.read_text()


def test_every_channel_endpoint_has_the_same_guards(tmp_path: Path) -> None:
    """The staging endpoint of a two-channel server asks for the same token as /mcp, and
    refuses a foreign Origin the same way."""
    import hashlib

    root = tmp_path / "repo"
    released(root)
    _cli(root, "promote", "1.0.0", "--to", "staging")
    tokens = tmp_path / "tokens.toml"
    tokens.write_text('[[tokens]]\nname = "ops"\nsha256 = "'
                      + hashlib.sha256(b"s3cret").hexdigest() + '"\n')
    server = HttpServer([str(root), "--channel", "production", "--channel", "staging",
                         "--tokens", str(tokens)], tmp_path / "server.log",
                        env={"XDG_CACHE_HOME": str(tmp_path / "c")})
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "t", "version": "1"}}}
    accept = {"accept": "application/json, text/event-stream"}
    try:
        with httpx2.Client(timeout=10) as http:
            for url in (server.url, f"{server.base}/channels/staging/mcp"):
                assert http.post(url, json=init, headers=accept).status_code == 401
                ok = http.post(url, json=init, headers={**accept,
                                                         "authorization": "Bearer s3cret"})
                assert ok.status_code == 200, ok.text
                foreign = http.post(url, json=init, headers={
                    **accept, "authorization": "Bearer s3cret",
                    "origin": "https://evil.example"})
                assert foreign.status_code == 403
            # SIGHUP narrows the token: its sessions end on every channel's endpoint
            sessions = [(url, http.post(url, json=init, headers={
                **accept, "authorization": "Bearer s3cret"}).headers["mcp-session-id"])
                for url in (server.url, f"{server.base}/channels/staging/mcp")]
            tokens.write_text(tokens.read_text() + 'see = ["other"]\n')
            server.proc.send_signal(signal.SIGHUP)
            _reloaded(server, apps=2)
            ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
            for url, sid in sessions:
                gone = http.post(url, json=ping, headers={
                    **accept, "authorization": "Bearer s3cret", "mcp-session-id": sid,
                    "mcp-protocol-version": "2025-06-18"})
                assert gone.status_code == 404, (url, gone.status_code, gone.text)
    finally:
        assert server.stop() == 0, server.stderr()


def _reloaded(server: HttpServer, apps: int) -> None:
    """Until each channel's app has logged its SIGHUP reload: each logs, then ends the
    sessions whose grant changed, in one callback of the server's only event loop, so a
    request sent after the last line is answered after every session was re-granted (a
    fixed 1 s sleep before). Gives up after 15 s: the 404s below then say what failed."""
    deadline = time.monotonic() + 15
    while server.stderr().count("tokens reloaded from ") < apps and \
            time.monotonic() < deadline:
        time.sleep(0.02)


def test_several_channels_follow_one_remote(tmp_path: Path) -> None:
    """With --repo, one clone and one fetch serve both channels: a `promote --push` of
    staging reaches the staging endpoint within one poll; production keeps its text."""
    dev = tmp_path / "dev"
    released(dev)
    _cli(dev, "promote", "1.0.0", "--to", "staging")
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "clone", "-q", "--mirror", str(dev), str(bare)], check=True)
    subprocess.run(["git", "-C", str(dev), "remote", "add", "origin", str(bare)], check=True)
    server = HttpServer(["--repo", f"file://{bare}@main", "--poll", POLL, "--channel",
                         "production", "--channel", "staging"], tmp_path / "server.log",
                        env={"XDG_CACHE_HOME": str(tmp_path / "c")})
    staging = f"{server.base}/channels/staging/mcp"

    async def run() -> tuple[str, str]:
        assert (await _text(staging))[0] == "Hello t"
        await asyncio.to_thread(_cli, dev, "promote", "1.0.1", "--to", "staging", "--push",
                                "origin")
        deadline = time.monotonic() + 5.0  # one 1 s poll, and the build
        while (await _text(staging))[0] != "Howdy t":
            assert time.monotonic() < deadline, server.log.read_text()
            await asyncio.sleep(0.1)
        return (await _text(server.url))[0], (await _text(staging))[1]["promptops/channel"]

    try:
        production, channel = asyncio.run(run())
    finally:
        assert server.stop() == 0, server.stderr()
    assert (production, channel) == ("Hello t", "staging")
    assert server.log.read_text().count("serve: following file://") == 1  # one clone
