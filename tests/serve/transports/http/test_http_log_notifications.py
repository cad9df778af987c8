"""A commit that does not build, and the one that recovers, reach HTTP clients (issue 24).

Before, `serve --http` wrote the follower's news to stderr only: no HTTP client heard
that the commit it waited for was refused. Now a session-era client hears it as
``notifications/message`` on its GET stream (``error``, then ``info`` for the commit that
builds again; without logging/setLevel it hears ``info`` and above), and a 2026-07-28
client hears it on a ``subscriptions/listen`` stream whose request's ``_meta`` carries
``io.modelcontextprotocol/logLevel`` (the stateless era's only opt-in). The official
Python SDK client is the judge in both eras.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import git
import httpx2
import pytest
from helpers.repo import commit_files
from http_helpers import HttpServer
from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client

BAD = "messages:\n  - role: user\n    text: \"{{ unclosed\"\n"
GOOD = "description: fixed\nmessages:\n  - role: user\n    text: fixed {n}\n"


@pytest.fixture(scope="module")
def server(kit_dir: Path, tmp_path_factory: pytest.TempPathFactory,
           module_env: dict[str, str]) -> Iterator[HttpServer]:
    srv = HttpServer([str(kit_dir)], tmp_path_factory.mktemp("log") / "server.log",
                     env=module_env)
    yield srv
    assert srv.stop() == 0, srv.stderr()


_counter = iter(range(1000))


def _break_and_fix(kit_dir: Path) -> tuple[str, str]:
    """A commit that does not build; the caller's next step commits the fix."""
    n = next(_counter)
    bad = commit_files(git.Repo(kit_dir), {f"prompts/bad{n}.prompt.yaml": BAD}, f"break {n}")
    return bad, f"prompts/bad{n}.prompt.yaml"


def _fix(kit_dir: Path, path: str) -> str:
    n = next(_counter)
    return commit_files(git.Repo(kit_dir), {path: GOOD.format(n=n)}, f"fix {n}")


async def _until(logged: list[types.LoggingMessageNotificationParams], level: str,
                 fragment: str) -> types.LoggingMessageNotificationParams:
    async with asyncio.timeout(20):
        while True:
            for p in logged:
                if p.level == level and fragment in str(p.data):
                    return p
            await asyncio.sleep(0.05)


def test_session_era_client_hears_the_failure_and_the_recovery(server: HttpServer,
                                                               kit_dir: Path) -> None:
    logged: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logged.append(params)

    async def run() -> None:
        async with httpx2.AsyncClient(timeout=30) as http, Client(
                streamable_http_client(server.url, http_client=http), mode="legacy",
                logging_callback=on_log, cache=None) as c:
            assert c.protocol_version == "2025-11-25"
            assert (await c.list_prompts()).prompts
            await asyncio.sleep(0.3)  # the client opens its GET stream after initialized
            bad, path = await asyncio.to_thread(_break_and_fix, kit_dir)
            failed = await _until(logged, "error", "does not build")
            assert bad[:12] in str(failed.data) and f"{path}:3:" in str(failed.data)
            assert failed.logger == "promptops"
            good = await asyncio.to_thread(_fix, kit_dir, path)
            await _until(logged, "info", f"commit {good[:12]} builds")

    asyncio.run(run())


def test_listen_stream_with_a_log_level_hears_it(server: HttpServer, kit_dir: Path) -> None:
    logged: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logged.append(params)

    async def run() -> None:
        async with httpx2.AsyncClient(timeout=30) as http, Client(
                streamable_http_client(server.url, http_client=http), mode="auto",
                log_level="info", logging_callback=on_log, cache=None) as c:
            assert c.protocol_version == "2026-07-28"
            async with c.listen(prompts_list_changed=True) as sub:
                bad, path = await asyncio.to_thread(_break_and_fix, kit_dir)
                failed = await _until(logged, "error", "does not build")
                assert bad[:12] in str(failed.data)
                good = await asyncio.to_thread(_fix, kit_dir, path)
                await _until(logged, "info", f"commit {good[:12]} builds")
                async with asyncio.timeout(20):  # and the change itself
                    async for event in sub:
                        if "ListChanged" in type(event).__name__:
                            break

    asyncio.run(run())


def test_listen_stream_without_a_log_level_hears_no_log(server: HttpServer,
                                                         kit_dir: Path) -> None:
    """The 2026-07-28 schema: without the opt-in, the server MUST NOT send any."""
    logged: list[Any] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logged.append(params)

    async def run() -> None:
        async with httpx2.AsyncClient(timeout=30) as http, Client(
                streamable_http_client(server.url, http_client=http), mode="auto",
                logging_callback=on_log, cache=None) as c, c.listen(
                    prompts_list_changed=True) as sub:
            _bad, path = await asyncio.to_thread(_break_and_fix, kit_dir)
            await asyncio.sleep(1.0)  # the follower settles after 120 ms: it tried it
            await asyncio.to_thread(_fix, kit_dir, path)
            async with asyncio.timeout(20):
                async for event in sub:
                    if "ListChanged" in type(event).__name__:
                        break
        assert logged == []

    asyncio.run(run())
    assert server.stderr().count("does not build") >= 1


ADMIN, TEAM = "token-for-admin-0123456789", "token-for-a-team-0123456789"


def test_only_callers_who_see_everything_hear_it(kit_dir: Path, tmp_path: Path,
                                                module_env: dict[str, str]) -> None:
    """A failure names files a restricted token may not see: only full views hear it."""
    tokens = tmp_path / "tokens.json"
    tokens.write_text(json.dumps({"tokens": [
        {"name": "admin", "sha256": hashlib.sha256(ADMIN.encode()).hexdigest()},
        {"name": "team", "sha256": hashlib.sha256(TEAM.encode()).hexdigest(),
         "see": ["kit/code_*"]}]}))
    srv = HttpServer([str(kit_dir), "--tokens", str(tokens)], tmp_path / "server.log",
                     env=module_env)
    heard: dict[str, list[types.LoggingMessageNotificationParams]] = {"admin": [], "team": []}

    async def client(who: str, token: str, done: asyncio.Event) -> None:
        async def on_log(params: types.LoggingMessageNotificationParams) -> None:
            heard[who].append(params)

        async with httpx2.AsyncClient(headers={"authorization": f"Bearer {token}"},
                                      timeout=30) as http, Client(
                streamable_http_client(srv.url, http_client=http), mode="legacy",
                logging_callback=on_log, cache=None) as c:
            assert (await c.list_prompts()).prompts
            await done.wait()

    async def run() -> None:
        done = asyncio.Event()
        tasks = [asyncio.create_task(client("admin", ADMIN, done)),
                 asyncio.create_task(client("team", TEAM, done))]
        await asyncio.sleep(1.0)  # both sessions initialized, their GET streams open
        bad, _path = await asyncio.to_thread(_break_and_fix, kit_dir)
        await _until(heard["admin"], "error", bad[:12])
        await asyncio.sleep(0.5)  # had it been sent to the team, it would be here by now
        done.set()
        await asyncio.gather(*tasks)

    try:
        asyncio.run(run())
    finally:
        assert srv.stop() == 0, srv.stderr()
    assert heard["team"] == []


def test_a_remote_that_cannot_be_fetched_is_a_warning_to_the_clients(
        tmp_path: Path, module_env: dict[str, str]) -> None:
    """``--repo``: the follower's warning that the remote cannot be fetched (the served
    prompts may be stale) reaches a session as it reaches stderr, as every other piece of
    the follower's news does on both transports (issue 25: one reporter, one policy)."""
    import shutil
    import subprocess

    from helpers.repo import make_repo

    dev, bare = tmp_path / "dev", tmp_path / "remote.git"
    make_repo(dev, {"promptops.yaml": "name: team\nversion: 1.0.0\n",
                    "prompts/hello.prompt.yaml": GOOD.format(n=0)})
    subprocess.run(["git", "clone", "--bare", "-q", str(dev), str(bare)], check=True,
                   capture_output=True)
    srv = HttpServer(["--repo", f"file://{bare}@main", "--poll", "200ms"],
                     tmp_path / "server.log",
                     env={**module_env, "XDG_CACHE_HOME": str(tmp_path / "cache")})
    logged: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logged.append(params)

    async def run() -> None:
        async with httpx2.AsyncClient(timeout=30) as http, Client(
                streamable_http_client(srv.url, http_client=http), mode="legacy",
                logging_callback=on_log, cache=None) as c:
            assert (await c.list_prompts()).prompts
            await asyncio.sleep(0.3)  # the client opens its GET stream after initialized
            await asyncio.to_thread(shutil.move, bare, tmp_path / "gone.git")
            warned = await _until(logged, "warning", "fetch failed")
            assert "remote.git" in str(warned.data) and warned.logger == "promptops"

    try:
        asyncio.run(run())
    finally:
        assert srv.stop() == 0, srv.stderr()
    assert "fetch failed" in srv.log.read_text()
