"""`promptops serve --worktree`: real saves watched by a real server, seen by the SDK client.

The official Python SDK client talks to a ``promptops serve --worktree`` subprocess over
its pipes while the test edits files in the package as an editor would; what the client
sees (``notifications/prompts/list_changed``, ``prompts/list``, the ``_meta`` of a
rendered prompt, the log messages it asked for) is the verdict.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from helpers.repo import cli_env, make_repo, write_files
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

MANIFEST = "name: live\nversion: 0.1.0\ndescription: live edits\n"
HELLO = "description: Say hello\nmessages:\n  - role: user\n    text: Hello!\n"
BYE = "description: Say bye\nmessages:\n  - role: user\n    text: Bye {{ who }}!\narguments:\n" \
      "  - name: who\n    required: true\n"
BROKEN = "description: 'never closed\nmessages:\n  - role: user\n    text: x\n"


def _wait_for(path: Path, needle: str, timeout: float = 20) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""
        if needle in text:
            return text
        time.sleep(0.05)
    raise AssertionError(f"{needle!r} never appeared in the server's stderr:\n{text}")


def _save(path: Path, text: str) -> None:
    """Save as editors that write a temp file and rename it over the original do."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # logging: a handshake-era client
def test_sdk_client_follows_saves_and_keeps_the_last_good_set(tmp_path: Path) -> None:
    root = tmp_path / "pkg"
    make_repo(root, {"promptops.yaml": MANIFEST, "prompts/hello.prompt.yaml": HELLO})
    err = tmp_path / "stderr.log"
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "promptops", "serve", "--worktree", str(root)],
        env=cli_env())

    async def run() -> None:
        changed = anyio.Event()
        counts = {"changed": 0}
        logged: list[str] = []

        async def on_message(message: Any) -> None:
            if isinstance(message, types.PromptListChangedNotification):
                counts["changed"] += 1
                changed.set()

        async def on_log(params: types.LoggingMessageNotificationParams) -> None:
            logged.append(str(params.data))

        with err.open("w") as errlog:
            async with (stdio_client(params, errlog=errlog) as (read, write),
                        ClientSession(read, write, message_handler=on_message,
                                      logging_callback=on_log) as s):
                init = await s.initialize()
                assert init.capabilities.prompts and init.capabilities.prompts.list_changed
                await s.set_logging_level("warning")
                assert [p.name for p in (await s.list_prompts()).prompts] == ["hello"]
                got = await s.get_prompt("hello", {})
                meta = got.meta or {}
                assert meta.get("promptops/worktree") is True
                assert "promptops/commit" not in meta
                _wait_for(err, "for changes")

                # 1. a new prompt, saved (not committed), appears after a list_changed
                _save(root / "prompts" / "bye.prompt.yaml", BYE)
                with anyio.fail_after(15):
                    await changed.wait()
                assert [p.name for p in (await s.list_prompts()).prompts] == ["bye", "hello"]
                bye = await s.get_prompt("bye", {"who": "Ada"})
                assert bye.messages[0].content.text == "Bye Ada!"  # type: ignore[union-attr]

                # 2. a broken save keeps the last good set, and says where it is broken
                changed = anyio.Event()
                before = counts["changed"]
                _save(root / "prompts" / "hello.prompt.yaml", BROKEN)
                text = _wait_for(err, "does not build")
                assert re.search(r"prompts/hello\.prompt\.yaml:1:14: .*never closed", text), text
                with anyio.fail_after(10):  # the same words reach the client's log
                    while not any("still serving the last good prompts" in m for m in logged):
                        await anyio.sleep(0.05)
                assert counts["changed"] == before
                assert [p.name for p in (await s.list_prompts()).prompts] == ["bye", "hello"]
                assert (await s.get_prompt("hello", {})).messages[0].content.text == "Hello!"  # type: ignore[union-attr]

                # 3. the fixing save recovers, with the new text
                _save(root / "prompts" / "hello.prompt.yaml", HELLO.replace("Hello!", "Hi!"))
                with anyio.fail_after(15):
                    await changed.wait()
                again = await s.get_prompt("hello", {})
                assert again.messages[0].content.text == "Hi!"  # type: ignore[union-attr]

                # 4. files that cannot change the served set do not reload
                changed = anyio.Event()
                settled = counts["changed"]
                write_files(root, {"prompts/hello.prompt.yaml~": "junk",
                                   "prompts/.hello.prompt.yaml.swp": "junk",
                                   "dist/x.bundle.json": "{}"})
                await anyio.sleep(1.0)
                assert counts["changed"] == settled

    anyio.run(run)
    log = err.read_text()
    assert "working tree" in log and "serving 1 prompts" in log


def test_head_mode_says_the_working_tree_is_not_served(tmp_path: Path) -> None:
    root = tmp_path / "pkg"
    make_repo(root, {"promptops.yaml": MANIFEST, "prompts/hello.prompt.yaml": HELLO})
    write_files(root, {"prompts/new.prompt.yaml": BYE})  # saved, never committed
    proc = subprocess.Popen([sys.executable, "-m", "promptops", "serve", str(root)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=cli_env())
    try:
        time.sleep(0.1)
        deadline = time.monotonic() + 15
        err = b""
        assert proc.stderr is not None
        os.set_blocking(proc.stderr.fileno(), False)
        while b"--worktree" not in err and time.monotonic() < deadline:
            err += proc.stderr.read() or b""
            time.sleep(0.05)
    finally:
        proc.communicate(timeout=15)
    text = err.decode()
    assert "has 1 uncommitted change that this server does not serve" in text, text
    assert "`promptops serve --worktree` serves the working tree" in text


def test_worktree_with_ref_or_bundle_is_a_usage_error(tmp_path: Path) -> None:
    for extra in (["--ref", "HEAD"], ["--bundle", str(tmp_path / "x.json")]):
        done = subprocess.run([sys.executable, "-m", "promptops", "serve", "--worktree", *extra],
                              capture_output=True, text=True, env=cli_env(), timeout=30,
                              stdin=subprocess.DEVNULL)
        assert done.returncode == 2
        assert "--worktree" in done.stderr


def test_head_mode_never_imports_the_watcher_or_rich(tmp_path: Path) -> None:
    root = tmp_path / "pkg"
    make_repo(root, {"promptops.yaml": MANIFEST, "prompts/hello.prompt.yaml": HELLO})
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "promptops", "serve",
                           str(root)], input=b"", capture_output=True, env=cli_env(),
                          timeout=60)
    assert done.returncode == 0, done.stderr
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.decode().splitlines()
                if line.startswith("import time:")}
    assert "promptops.serve.follow" in imported  # the measurement saw serve's imports
    assert not {m for m in imported if m.split(".")[0] in ("watchfiles", "rich", "anyio")}
