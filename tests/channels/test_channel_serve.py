"""`serve --channel` end to end: the official Python SDK client over stdio sees a promote
and a rollback as ``list_changed``, and the next ``prompts/get`` returns the text of the
release the channel now names, with the channel in ``_meta``."""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
from helpers.repo import cli_env, commit_files, make_repo
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

NOTIFY_S = 10.0


def _manifest(version: str) -> str:
    return f"name: demo\nversion: {version}\ndescription: channel test\n"


def _prompt(text: str) -> str:
    return (f"description: a prompt\narguments:\n  - name: topic\n    required: true\n"
            f'messages:\n  - role: user\n    text: "{text} {{{{ topic }}}}"\n')


def _cli(root: Path, *args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "promptops", *args], cwd=root,
                          env=cli_env(), capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@functools.cache
def _released_once() -> Path:
    """The released repository, made by the commands once per test process: two
    ``release`` and a ``promote`` are three ``promptops`` processes (~2 s of CPU), and
    seven tests of three modules start from this same state."""
    root = Path(tempfile.mkdtemp(prefix="released-")) / "repo"
    atexit.register(shutil.rmtree, root.parent, ignore_errors=True)
    repo = make_repo(root, {"promptops.yaml": _manifest("1.0.0"),
                            "prompts/greet.prompt.yaml": _prompt("Hello")})
    _cli(root, "release")
    commit_files(repo, {"promptops.yaml": _manifest("1.0.1"),
                        "prompts/greet.prompt.yaml": _prompt("Howdy")}, "howdy")
    _cli(root, "release")
    _cli(root, "promote", "1.0.0", "--to", "production", "-m", "first")
    return root


def released(root: Path) -> None:
    """demo@1.0.0 says Hello, demo@1.0.1 says Howdy; production is at 1.0.0: a copy of
    the repository (work tree and ``.git``: tags, the channel's refs and log) the real
    commands made, which each test then changes on its own."""
    shutil.copytree(_released_once(), root, symlinks=True)


def test_python_sdk_client_follows_a_promote_and_a_rollback(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    released(root)

    async def main() -> list[tuple[str, dict[str, Any]]]:
        changed = anyio.Event()
        seen: list[tuple[str, dict[str, Any]]] = []

        async def on_message(msg: Any) -> None:
            inner = getattr(msg, "root", msg)
            if getattr(inner, "method", None) == "notifications/prompts/list_changed":
                changed.set()

        env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PROMPTOPS_"))}
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "promptops", "serve", "--channel", "production", str(root)], env=env)
        async with stdio_client(params) as (read, write), \
                ClientSession(read, write, message_handler=on_message) as session:
            await session.initialize()

            async def get() -> None:
                result = await session.get_prompt("greet", {"topic": "t"})
                data = result.model_dump(by_alias=True)
                seen.append((data["messages"][0]["content"]["text"], data["_meta"]))

            await get()
            for command in (["promote", "1.0.1", "--to", "production", "-m", "go"],
                            ["rollback", "production", "-m", "back"]):
                nonlocal_changed = changed
                await anyio.to_thread.run_sync(lambda c=command: _cli(root, *c))
                with anyio.fail_after(NOTIFY_S):
                    await nonlocal_changed.wait()
                changed = anyio.Event()
                await get()
        return seen

    seen = anyio.run(main)
    assert [text for text, _ in seen] == ["Hello t", "Howdy t", "Hello t"]
    metas = [meta for _, meta in seen]
    assert [m["promptops/version"] for m in metas] == ["1.0.0", "1.0.1", "1.0.0"]
    assert all(m["promptops/channel"] == "production" for m in metas)
    tag = subprocess.run(["git", "-C", str(root), "cat-file", "-p", "refs/tags/demo@1.0.1"],
                         capture_output=True, text=True, check=True).stdout
    assert f"bundle-digest: {metas[1]['promptops/digest']}" in tag  # the release's bundle
    assert metas[1]["promptops/commit"] == subprocess.run(
        ["git", "-C", str(root), "rev-parse", "demo@1.0.1^{commit}"], capture_output=True,
        text=True, check=True).stdout.strip()
