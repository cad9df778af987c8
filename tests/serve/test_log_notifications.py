"""A broken save reaches the client as a log message, and so does the fix (issue 24, item 6).

`serve --worktree` advertised ``logging`` but told only stderr when a save did not
build: a person in Claude Desktop (which sets no log level) saw nothing. The official
Python SDK client over stdio is the judge: a handshake-era client that never sent
logging/setLevel hears the failure (``error``, with file:line:col) and the recovery
(``info``); a 2026-07-28 client hears both on a listen stream whose ``_meta`` asks for a
log level. (Over HTTP: tests/serve/transports/http/test_http_log_notifications.py.)
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest
from helpers.repo import cli_env, make_repo
from mcp import Client, StdioServerParameters, types

MANIFEST = "name: live\nversion: 0.1.0\ndescription: live edits\n"
HELLO = "description: Say hello\nmessages:\n  - role: user\n    text: Hello!\n"
BROKEN = "description: 'never closed\nmessages:\n  - role: user\n    text: x\n"


def _save(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


async def _until(logged: list[types.LoggingMessageNotificationParams], level: str,
                 fragment: str) -> str:
    async with asyncio.timeout(20):
        while True:
            for p in logged:
                if p.level == level and fragment in str(p.data):
                    return str(p.data)
            await asyncio.sleep(0.05)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_a_broken_save_and_its_fix_are_logged_to_the_client(tmp_path: Path, mode: str) -> None:
    root = tmp_path / "pkg"
    make_repo(root, {"promptops.yaml": MANIFEST, "prompts/hello.prompt.yaml": HELLO})
    prompt = root / "prompts" / "hello.prompt.yaml"
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "promptops", "serve", "--worktree", str(root)],
        env=cli_env())
    logged: list[types.LoggingMessageNotificationParams] = []

    async def on_log(p: types.LoggingMessageNotificationParams) -> None:
        logged.append(p)

    async def run() -> None:
        # legacy: no logging/setLevel is sent (log_level only stamps 2026-07-28 requests)
        async with Client(params, mode=mode, logging_callback=on_log,
                          log_level="info" if mode == "auto" else None, cache=None) as c:
            assert [p.name for p in (await c.list_prompts()).prompts] == ["hello"]
            if mode == "auto":
                assert c.protocol_version == "2026-07-28"
                async with c.listen(prompts_list_changed=True) as sub:
                    await _break_and_fix(prompt, logged)
                    async with asyncio.timeout(20):
                        async for event in sub:
                            if "ListChanged" in type(event).__name__:
                                break
            else:
                assert c.protocol_version == "2025-11-25"
                await _break_and_fix(prompt, logged)
            assert (await c.get_prompt("hello", {})).messages[0].content.text == "Hi!"  # type: ignore[union-attr]

    asyncio.run(run())


async def _break_and_fix(prompt: Path, logged: list[types.LoggingMessageNotificationParams],
                         ) -> None:
    await asyncio.sleep(1.0)  # the watch is in place (a save before it is found too)
    _save(prompt, BROKEN)
    failed = await _until(logged, "error", "does not build")
    assert "prompts/hello.prompt.yaml:1:14:" in failed and "never closed" in failed, failed
    assert "still serving the last good prompts" in failed
    _save(prompt, HELLO.replace("Hello!", "Hi!"))
    await _until(logged, "info", "the working tree builds again; serving 1 prompt")
