"""Issue 24 item 9: Gemini CLI, Goose, GitHub Copilot CLI (and VS Code's ``mcpServers``
files), and each client's own syntax: Cursor's and Gemini's comments, Goose's YAML.

Real files in a temp HOME, in-process; the entry itself is started by the tests of
test_install.py and test_install_clones.py (the same command for every client).
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from helpers.repo import make_repo, run_cli

from promptops.install import jsonedit
from promptops.pipeline.yamlio.loader import load_yaml

MANIFEST = "name: acme-prompts\nversion: 1.0.0\ndescription: d\n"
HELLO = "description: Say hello\nmessages:\n  - role: user\n    text: Hello!\n"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    h.mkdir()
    return h


@pytest.fixture
def package(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    make_repo(root, {"prompts/promptops.yaml": MANIFEST,
                     "prompts/prompts/hello.prompt.yaml": HELLO})
    return root / "prompts"


def _install(home: Path, *args: str, **env: str) -> Any:
    return run_cli("install", *args, HOME=str(home), XDG_CONFIG_HOME="", APPDATA="", **env)


def _absolute(entry: dict[str, Any], package: Path) -> None:
    assert os.path.isabs(entry["command"])
    assert entry["args"][-2:] == ["serve", str(package.resolve())]


def test_cursor_accepts_the_comments_cursor_accepts(home: Path, package: Path) -> None:
    cfg = home / ".cursor" / "mcp.json"
    cfg.parent.mkdir()
    original = ('{\n  // servers I use\n  "mcpServers": {\n    "a": {"command": "a"} // mine\n'
                '  }\n}\n')
    cfg.write_text(original)
    done = _install(home, "cursor", str(package))
    assert done.returncode == 0, done.stderr
    text = cfg.read_text()
    assert text.startswith('{\n  // servers I use\n  "mcpServers": {\n    "a": {"command": "a"},'
                           ' // mine\n    "acme-prompts": {\n')
    assert text.endswith("\n    }\n  }\n}\n")
    _absolute(jsonedit.load(text, jsonc=True)[1]["mcpServers"]["acme-prompts"], package)


def test_a_comment_after_a_trailing_comma_stays_on_its_line() -> None:
    text = '{\n  "servers": {\n    "a": 1, // mine\n  },\n}\n'
    out = jsonedit.merge(text, ("servers",), "n", 2, jsonc=True)
    assert out == '{\n  "servers": {\n    "a": 1, // mine\n    "n": 2,\n  },\n}\n'


def test_gemini_user_settings_keep_their_comments(home: Path, package: Path) -> None:
    cfg = home / ".gemini" / "settings.json"
    cfg.parent.mkdir()
    original = '{\n  // look\n  "ui": {"theme": "GitHub"}\n}\n'
    cfg.write_text(original)
    done = _install(home, "gemini", str(package))
    assert done.returncode == 0, done.stderr
    text = cfg.read_text()
    assert text.startswith('{\n  // look\n  "ui": {"theme": "GitHub"},\n  "mcpServers": {\n')
    entry = jsonedit.load(text, jsonc=True, commas=False)[1]["mcpServers"]["acme-prompts"]
    _absolute(entry, package)
    assert "type" not in entry
    assert stat.S_IMODE(cfg.stat().st_mode) != 0  # kept, not reset


def test_gemini_refuses_the_trailing_comma_gemini_refuses(home: Path, package: Path) -> None:
    cfg = home / ".gemini" / "settings.json"
    cfg.parent.mkdir()
    original = '{\n  "ui": {},\n}\n'
    cfg.write_text(original)
    done = _install(home, "gemini", str(package))
    assert done.returncode == 2
    assert f"{cfg}:3:1: not valid JSON with comments" in done.stderr
    assert cfg.read_text() == original


def test_gemini_project_scope_is_portable(home: Path, package: Path) -> None:
    done = _install(home, "gemini", "--scope", "project", str(package))
    assert done.returncode == 0, done.stderr
    data = json.loads((package.parent / ".gemini" / "settings.json").read_text())
    assert data == {"mcpServers": {"acme-prompts": {"command": "promptops",
                                                    "args": ["serve", "prompts"]}}}


def test_copilot_user_file_and_copilot_home(home: Path, package: Path, tmp_path: Path) -> None:
    done = _install(home, "copilot", str(package))
    assert done.returncode == 0, done.stderr
    entry = json.loads((home / ".copilot" / "mcp-config.json").read_text())[
        "mcpServers"]["acme-prompts"]
    assert entry["type"] == "stdio" and entry["tools"] == ["*"]
    _absolute(entry, package)
    elsewhere = tmp_path / "copilot-home"
    done = _install(home, "copilot", str(package), COPILOT_HOME=str(elsewhere))
    assert done.returncode == 0, done.stderr
    assert (elsewhere / "mcp-config.json").is_file()


def test_copilot_project_is_the_portable_mcp_json(home: Path, package: Path) -> None:
    done = _install(home, "copilot", "--scope", "project", str(package))
    assert done.returncode == 0, done.stderr
    data = json.loads((package.parent / ".mcp.json").read_text())
    assert data["mcpServers"]["acme-prompts"] == {"type": "stdio", "command": "promptops",
                                                  "args": ["serve", "prompts"]}


GOOSE = """\
# goose settings
active_provider: anthropic
GOOSE_MODE: smart_approve  # ask first
extensions:
  developer:
    bundled: true
    enabled: true
    name: developer
    timeout: 300
    type: builtin

  # the memory one
  memory:
    enabled: false
    name: memory
    type: builtin
GOOSE_TOOLSHIM: false
"""


def _goose(home: Path) -> Path:
    return home / ".config" / "goose" / "config.yaml"


def test_goose_extension_is_spliced_into_config_yaml(home: Path, package: Path) -> None:
    cfg = _goose(home)
    cfg.parent.mkdir(parents=True)
    cfg.write_text(GOOSE)
    done = _install(home, "goose", str(package))
    assert done.returncode == 0, done.stderr
    assert f"added server 'acme-prompts' in {cfg} (extensions)" in done.stderr
    text = cfg.read_text()
    head = GOOSE[:GOOSE.index("GOOSE_TOOLSHIM")]
    assert text.startswith(head.rstrip("\n") + '\n  "acme-prompts":\n    enabled: true\n')
    assert text.endswith("GOOSE_TOOLSHIM: false\n")
    data = load_yaml(str(cfg), text.encode()).data
    before = load_yaml(str(cfg), GOOSE.encode()).data
    ext = data["extensions"].pop("acme-prompts")
    assert data == before  # everything else as it was
    assert ext["type"] == "stdio" and ext["enabled"] is True and ext["name"] == "acme-prompts"
    assert os.path.isabs(ext["cmd"]) and ext["args"] == ["serve", str(package.resolve())]
    again = _install(home, "goose", str(package))
    assert again.returncode == 2 and "use --force" in again.stderr
    forced = _install(home, "goose", "--force", "--name", "acme-prompts", "--worktree",
                      str(package))
    assert forced.returncode == 0, forced.stderr
    data = load_yaml(str(cfg), cfg.read_text().encode()).data
    assert data["extensions"]["acme-prompts"]["args"][-2] == "--worktree"
    assert cfg.read_text().count('"acme-prompts":') == 1


def test_goose_without_a_config_gets_one(home: Path, package: Path) -> None:
    done = _install(home, "goose", str(package))
    assert done.returncode == 0, done.stderr
    cfg = _goose(home)
    assert cfg.read_text().startswith('extensions:\n  "acme-prompts":\n    enabled: true\n')
    assert stat.S_IMODE(cfg.stat().st_mode) == 0o600


def test_goose_with_flow_extensions_is_refused_with_the_block(home: Path,
                                                              package: Path) -> None:
    cfg = _goose(home)
    cfg.parent.mkdir(parents=True)
    original = "extensions: {developer: {enabled: true, type: builtin, name: developer}}\n"
    cfg.write_text(original)
    done = _install(home, "goose", str(package))
    assert done.returncode == 2
    assert "add it under `extensions:` by hand" in done.stderr
    assert '"acme-prompts":' in done.stderr
    assert cfg.read_text() == original
