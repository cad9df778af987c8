"""`promptops install`: real client config files merged in a temp HOME, and the entry run.

Each client's file is written where that client reads it (HOME is a temp folder), other
servers and unrelated keys come back byte for byte, a same-name entry is refused without
``--force``, and the command the entry names starts a real server that answers
``initialize`` with an empty PATH, as a GUI app would start it.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers.repo import make_repo, run_cli

from promptops.install import jsonedit

MANIFEST = "name: acme-prompts\nversion: 1.0.0\ndescription: d\n"
HELLO = "description: Say hello\nmessages:\n  - role: user\n    text: Hello!\n"
FILES = {"promptops.yaml": MANIFEST, "prompts/hello.prompt.yaml": HELLO}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    h.mkdir()
    return h


@pytest.fixture
def package(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    make_repo(root, {f"prompts/{k}": v for k, v in FILES.items()})
    return root / "prompts"


def _install(home: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli("install", *args, cwd=cwd, HOME=str(home), XDG_CONFIG_HOME="",
                   APPDATA="")


def _read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _start(entry: dict[str, Any], home: Path) -> dict[str, Any]:
    """Run the entry as a client does (its env over a bare one, PATH empty) and initialize."""
    env = {"HOME": str(home), "PATH": "", **entry.get("env", {})}
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}}
    done = subprocess.run([entry["command"], *entry["args"]], input=json.dumps(init) + "\n",
                          capture_output=True, text=True, env=env, cwd="/", timeout=60)
    assert done.returncode == 0, done.stderr
    reply = json.loads(done.stdout.splitlines()[0])
    assert "result" in reply, reply
    return dict(reply["result"])


def _check_entry(entry: dict[str, Any], package: Path) -> None:
    assert os.path.isabs(entry["command"])
    assert entry["args"][-2:] == ["serve", str(package.resolve())]


def test_claude_desktop_into_an_existing_file_and_the_entry_serves(home: Path,
                                                                   package: Path) -> None:
    cfg = home / ".config" / "Claude" / "claude_desktop_config.json"
    cfg.parent.mkdir(parents=True)
    original = '{\n    "mcpServers": {\n        "other": {"command": "x"}\n    },\n    "k": 1\n}\n'
    cfg.write_text(original)
    done = _install(home, "claude-desktop", str(package))
    assert done.returncode == 0, done.stderr
    assert f"added server 'acme-prompts' in {cfg}" in done.stderr
    text = cfg.read_text()
    assert text.startswith('{\n    "mcpServers": {\n        "other": {"command": "x"},\n'
                           '        "acme-prompts": {\n            "command": ')
    assert text.endswith('    },\n    "k": 1\n}\n')
    data = _read(cfg)
    assert data["mcpServers"]["other"] == {"command": "x"} and data["k"] == 1
    entry = data["mcpServers"]["acme-prompts"]
    _check_entry(entry, package)
    assert "type" not in entry
    assert _start(entry, home)["serverInfo"]["name"]


def test_claude_desktop_without_its_folder_says_so(home: Path, package: Path) -> None:
    done = _install(home, "claude-desktop", str(package))
    assert done.returncode == 1
    assert "does not exist: install and start Claude Desktop once" in done.stderr
    assert not (home / ".config").exists()
    shown = _install(home, "claude-desktop", str(package), "--print")
    assert shown.returncode == 0 and '"acme-prompts": {' in shown.stdout


def test_claude_code_scopes(home: Path, package: Path) -> None:
    state = home / ".claude.json"
    state.write_text('{"firstStartTime": "2026-01-01", "projects": {}}')
    state.chmod(0o600)
    assert _install(home, "claude-code", str(package)).returncode == 0
    data = _read(state)
    top = str(package.parent.resolve())
    local = data["projects"][top]["mcpServers"]["acme-prompts"]
    assert local["type"] == "stdio"
    _check_entry(local, package)
    assert data["firstStartTime"] == "2026-01-01"
    assert stat.S_IMODE(state.stat().st_mode) == 0o600
    assert _install(home, "claude-code", "--scope", "user", str(package)).returncode == 0
    assert _read(state)["mcpServers"]["acme-prompts"] == local
    done = _install(home, "claude-code", "--scope", "project", str(package))
    assert done.returncode == 0 and "is meant to be committed" in done.stderr
    shared = _read(package.parent / ".mcp.json")["mcpServers"]["acme-prompts"]
    assert shared == {"type": "stdio", "command": "promptops", "args": ["serve", "prompts"]}
    _start(local, home)


def test_vscode_keeps_comments_and_trailing_commas(home: Path, package: Path) -> None:
    cfg = home / ".config" / "Code" / "User" / "mcp.json"
    cfg.parent.mkdir(parents=True)
    original = ('{\n\t// my servers\n\t"servers": {\n\t\t"a": {"type": "stdio", "command": "a"},'
                '\n\t},\n\t/* inputs */\n\t"inputs": [],\n}\n')
    cfg.write_text(original)
    assert _install(home, "vscode", str(package)).returncode == 0
    text = cfg.read_text()
    assert text.startswith('{\n\t// my servers\n\t"servers": {\n\t\t"a": {"type": "stdio", '
                           '"command": "a"},\n\t\t"acme-prompts": {\n\t\t\t"type": "stdio",\n')
    assert text.endswith('\n\t\t},\n\t},\n\t/* inputs */\n\t"inputs": [],\n}\n')
    entry = jsonedit.load(text, jsonc=True)[1]["servers"]["acme-prompts"]
    _check_entry(entry, package)


def test_vscode_workspace_uses_the_workspace_folder(home: Path, package: Path) -> None:
    assert _install(home, "vscode", "--scope", "workspace", str(package)).returncode == 0
    entry = _read(package.parent / ".vscode" / "mcp.json")["servers"]["acme-prompts"]
    assert entry["args"][-1] == "${workspaceFolder}/prompts"


def test_cursor_new_file_is_private(home: Path, package: Path) -> None:
    assert _install(home, "cursor", str(package)).returncode == 0
    cfg = home / ".cursor" / "mcp.json"
    entry = _read(cfg)["mcpServers"]["acme-prompts"]
    _check_entry(entry, package)
    assert stat.S_IMODE(cfg.stat().st_mode) == 0o600
    _start(entry, home)


def test_same_name_is_refused_without_force(home: Path, package: Path) -> None:
    cfg = home / ".cursor" / "mcp.json"
    cfg.parent.mkdir()
    cfg.write_text('{"mcpServers": {"acme-prompts": {"command": "old"}}}\n')
    done = _install(home, "cursor", str(package))
    assert done.returncode == 2
    assert "a server named 'acme-prompts' is already configured (in mcpServers); use --force" \
        in done.stderr
    assert cfg.read_text() == '{"mcpServers": {"acme-prompts": {"command": "old"}}}\n'
    forced = _install(home, "cursor", "--force", str(package))
    assert forced.returncode == 0 and "replaced server 'acme-prompts'" in forced.stderr
    _check_entry(_read(cfg)["mcpServers"]["acme-prompts"], package)


def test_a_broken_file_is_reported_and_left_alone(home: Path, package: Path) -> None:
    cfg = home / ".cursor" / "mcp.json"
    cfg.parent.mkdir()
    cfg.write_text('{\n  "mcpServers": {\n    "a": {"command": "x"},\n  }\n}\n')
    done = _install(home, "cursor", str(package))
    assert done.returncode == 2
    assert f"{cfg}:4:3: not valid JSON with comments" in done.stderr  # Cursor: no trailing ,
    assert cfg.read_text().endswith("  }\n}\n")
    assert [p.name for p in cfg.parent.iterdir()] == ["mcp.json"]  # no temp file left


def test_print_writes_nothing_and_json_prints_the_block(home: Path, package: Path) -> None:
    done = _install(home, "cursor", "--print", str(package))
    assert done.returncode == 0 and done.stdout.startswith("---")
    assert not (home / ".cursor").exists()
    block = _install(home, "json", str(package))
    entry = json.loads(block.stdout)["mcpServers"]["acme-prompts"]
    _check_entry(entry, package)
    assert "type" not in entry


def test_worktree_and_name_options(home: Path, package: Path) -> None:
    assert _install(home, "cursor", "--name", "dev", "--worktree", str(package)).returncode == 0
    entry = _read(home / ".cursor" / "mcp.json")["mcpServers"]["dev"]
    assert entry["args"][-3:] == ["serve", "--worktree", str(package.resolve())]


@pytest.mark.parametrize(("text", "expected"), [
    ("", '{\n  "mcpServers": {\n    "n": 1\n  }\n}\n'),
    ("{}", '{\n  "mcpServers": {\n    "n": 1\n  }\n}'),
    ('{"a": 1}', '{"a": 1, "mcpServers": {"n": 1}}'),
    ('{\r\n  "a": 1\r\n}\r\n', '{\r\n  "a": 1,\r\n  "mcpServers": {\r\n    "n": 1\r\n  }\r\n}\r\n'),
    ('\ufeff{\n  "a": 1 // one\n}\n', '\ufeff{\n  "a": 1, // one\n  "mcpServers": {\n'
                                      '    "n": 1\n  }\n}\n'),
    ('{\n  "mcpServers": { // none yet\n  }\n}', '{\n  "mcpServers": { // none yet\n'
                                                 '    "n": 1\n  }\n}'),
])
def test_merge_edits_in_place(text: str, expected: str) -> None:
    jsonc = "//" in text
    assert jsonedit.merge(text, ("mcpServers",), "n", 1, jsonc=jsonc) == expected


def test_merge_never_touches_strings_that_look_like_syntax() -> None:
    text = '{"s": "a,} // not a comment", "mcpServers": {"x": 1,}}'
    out = jsonedit.merge(text, ("mcpServers",), "n", 2, jsonc=True)
    assert out == '{"s": "a,} // not a comment", "mcpServers": {"x": 1, "n": 2,}}'


def test_duplicate_keys_are_refused() -> None:
    with pytest.raises(jsonedit.ConfigError, match="appears twice"):
        jsonedit.merge('{"a": 1, "a": 2}', ("mcpServers",), "n", 1, jsonc=False)


def test_server_command_is_this_environment() -> None:
    from promptops.install.clients import server_command

    argv = server_command()
    assert os.path.isabs(argv[0])
    version = subprocess.run([*argv, "--version"], capture_output=True, text=True,
                             env={"PATH": ""}, cwd="/", timeout=60)
    assert version.returncode == 0 and version.stdout.startswith("promptops ")
    assert Path(argv[0]).parent == Path(sys.executable).parent or argv[1:3] == ["-P", "-m"]
