"""Issue 24 item 8: the configs `install --scope project|workspace` writes work on a
teammate's clone; and issue 23 defect 5's FIFO, which only a process can show.

Two real clones of one repository at different temp paths: install runs in the first,
the files it writes are copied into the second, the first is deleted, and each file's
entry is started the way its client starts it (the client's variable expansion, its
working directory, a PATH that holds ``promptops`` and a fresh HOME), then spoken to
with the official MCP SDK: initialize and prompts/list.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sysconfig
from pathlib import Path
from typing import Any

import anyio
from helpers.repo import make_repo, posix_only, run_cli, run_cli_process
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from promptops.install import jsonedit

FIFOS = "named pipes (mkfifo) are POSIX"
MANIFEST = "name: acme-prompts\nversion: 1.0.0\ndescription: d\n"
HELLO = "description: Say hello\nmessages:\n  - role: user\n    text: Hello!\n"

# client, scope, file, servers key, how the client expands a string of the entry
FILES = [
    ("claude-code", "project", ".mcp.json", "mcpServers", "claude"),
    ("vscode", "workspace", ".vscode/mcp.json", "servers", "vscode"),
    ("cursor", "workspace", ".cursor/mcp.json", "mcpServers", "vscode"),
    ("gemini", "project", ".gemini/settings.json", "mcpServers", "gemini"),
]


def _expand(text: str, style: str, workspace: Path, env: dict[str, str]) -> str:
    """A string of the entry as the client hands it to the process it starts.

    VS Code and Cursor replace ``${workspaceFolder}`` (and ``${env:NAME}``); Claude Code
    replaces ``${VAR}`` and ``${VAR:-default}`` from its environment; Gemini CLI replaces
    ``$VAR`` and ``${VAR}``. Whatever the entry holds is expanded, so a leftover absolute
    path of the first clone would show as one.
    """
    if style == "vscode":
        text = text.replace("${workspaceFolder}", str(workspace))
        return re.sub(r"\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}", lambda m: env.get(m[1], ""), text)
    if style == "claude":
        return re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}",
                      lambda m: env.get(m[1], m[2] if m[2] is not None else m[0]), text)
    return re.sub(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))",
                  lambda m: env.get(m[1] or m[2], m[0]), text)


def _teammate_env(home: Path) -> dict[str, str]:
    scripts = Path(sysconfig.get_path("scripts"))
    assert (scripts / "promptops").is_file(), "the promptops console script is not installed"
    return {"HOME": str(home), "PATH": os.pathsep.join([str(scripts), "/usr/bin", "/bin"]),
            "LANG": "C.UTF-8"}


async def _prompts(params: StdioServerParameters) -> tuple[str, list[str]]:
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()
        listed = await session.list_prompts()
        return init.server_info.name, [p.name for p in listed.prompts]


def test_shared_configs_start_the_server_in_another_clone(tmp_path: Path) -> None:
    origin = tmp_path / "origin"
    make_repo(origin, {"team/prompts/promptops.yaml": MANIFEST,
                       "team/prompts/prompts/hello.prompt.yaml": HELLO})
    first = tmp_path / "alice" / "work" / "repo"
    second = tmp_path / "bob" / "elsewhere" / "deeper" / "checkout"
    for clone in (first, second):
        subprocess.run(["git", "clone", "-q", str(origin), str(clone)], check=True)
    alice_home = tmp_path / "alice-home"
    alice_home.mkdir()
    for client, scope, rel, _, _ in FILES:
        done = run_cli("install", client, "--scope", scope, str(first / "team" / "prompts"),
                       HOME=str(alice_home), XDG_CONFIG_HOME="", APPDATA="")
        assert done.returncode == 0, done.stderr
        assert re.search(r"a teammate needs `promptops` \S+ or later on PATH, and git",
                         done.stderr), done.stderr
        text = (first / rel).read_text()
        assert str(first) not in text and str(tmp_path) not in text  # nothing of this machine
        (second / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(first / rel, second / rel)
    shutil.rmtree(first)  # nothing may still point there

    bob_home = tmp_path / "bob-home"
    bob_home.mkdir()
    env = _teammate_env(bob_home)
    for client, _, rel, key, style in FILES:
        data = jsonedit.load((second / rel).read_text(), jsonc=True)[1]
        entry: dict[str, Any] = data[key]["acme-prompts"]
        command = _expand(entry["command"], style, second, env)
        args = [_expand(a, style, second, env) for a in entry["args"]]
        assert command == "promptops", (client, entry)
        params = StdioServerParameters(command=command, args=args,
                                       env={**env, **entry.get("env", {})}, cwd=second)
        name, prompts = anyio.run(_prompts, params)
        assert name and prompts == ["hello"], (client, entry)


def test_vscode_workspace_entry_is_portable_from_the_repository_root(tmp_path: Path) -> None:
    origin = tmp_path / "origin"
    make_repo(origin, {"promptops.yaml": MANIFEST, "prompts/hello.prompt.yaml": HELLO})
    home = tmp_path / "home"
    home.mkdir()
    done = run_cli("install", "vscode", "--scope", "workspace", str(origin), HOME=str(home),
                   XDG_CONFIG_HOME="", APPDATA="")
    assert done.returncode == 0, done.stderr
    entry = json.loads((origin / ".vscode" / "mcp.json").read_text())["servers"]["acme-prompts"]
    assert entry == {"type": "stdio", "command": "promptops",
                     "args": ["serve", "${workspaceFolder}"]}


@posix_only(FIFOS)
def test_a_committed_fifo_config_is_refused_without_hanging(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    make_repo(repo, {"promptops.yaml": MANIFEST, "prompts/hello.prompt.yaml": HELLO})
    (repo / ".vscode").mkdir()
    os.mkfifo(repo / ".vscode" / "mcp.json")
    home = tmp_path / "home"
    home.mkdir()
    done = run_cli_process("install", "vscode", "--scope", "workspace", str(repo),
                           timeout=60, HOME=str(home), XDG_CONFIG_HOME="")
    assert done.returncode == 2, done.stderr
    assert "mcp.json is not a regular file" in done.stderr


@posix_only(FIFOS)
def test_the_user_fifo_is_refused_too(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    make_repo(repo, {"promptops.yaml": MANIFEST, "prompts/hello.prompt.yaml": HELLO})
    home = tmp_path / "home"
    (home / ".cursor").mkdir(parents=True)
    os.mkfifo(home / ".cursor" / "mcp.json")
    done = run_cli_process("install", "cursor", str(repo), timeout=60, HOME=str(home))
    assert done.returncode == 2, done.stderr
    assert "is not a regular file" in done.stderr
