"""`promptops install` against config files an attacker (or an accident) shaped.

Issue 23, defects 5-7: a repository-scope config (``.mcp.json``, ``.vscode/mcp.json``,
``.cursor/mcp.json``, ``.gemini/settings.json``) that the repository commits as a symlink
or as something other than a regular file is refused (exit 2) before anything is read
through it; a user config kept as a symlink (dotfiles) is written through to the link's
target, atomically, and the link stays; a config nested too deeply, holding ``NaN`` or
``Infinity``, or a number Python cannot convert is "not valid JSON" with a position, exit
2, and the file is left exactly as it was. In-process, against real files in a temp HOME.
The FIFO case (a read that would block forever) is in test_install_clones.py, which runs
promptops as a process.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from helpers.repo import SYMLINKS, make_repo, posix_only, run_cli

MANIFEST = "name: acme-prompts\nversion: 1.0.0\ndescription: d\n"
HELLO = "description: Say hello\nmessages:\n  - role: user\n    text: Hello!\n"
SECRET = '{"oauthAccount": {"token": "s3cret-of-the-user"}, "mcpServers": {}}\n'


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    h.mkdir()
    return h


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    make_repo(root, {"prompts/promptops.yaml": MANIFEST,
                     "prompts/prompts/hello.prompt.yaml": HELLO})
    return root


def _install(home: Path, *args: str) -> Any:
    return run_cli("install", *args, HOME=str(home), XDG_CONFIG_HOME="", APPDATA="")


def _listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


# --- defect 5: repository-scope configs are never read or written through a symlink ---

@posix_only(SYMLINKS)
def test_project_mcp_json_linked_to_the_users_state_is_refused(home: Path, repo: Path) -> None:
    state = home / ".claude.json"
    state.write_text(SECRET)
    (repo / ".mcp.json").symlink_to(state)
    done = _install(home, "claude-code", "--scope", "project", str(repo / "prompts"))
    assert done.returncode == 2, done.stderr
    assert ".mcp.json is a symlink" in done.stderr
    assert "s3cret" not in done.stdout + done.stderr
    assert state.read_text() == SECRET  # the user's file is untouched
    assert (repo / ".mcp.json").is_symlink()  # and so is the link
    shown = _install(home, "claude-code", "--scope", "project", "--print", str(repo / "prompts"))
    assert shown.returncode == 2 and "s3cret" not in shown.stdout + shown.stderr


@posix_only(SYMLINKS)
@pytest.mark.parametrize(("client", "folder"), [("vscode", ".vscode"), ("cursor", ".cursor"),
                                                ("gemini", ".gemini")])
def test_a_workspace_folder_linked_elsewhere_is_refused(home: Path, repo: Path, tmp_path: Path,
                                                         client: str, folder: str) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    (repo / folder).symlink_to(victim, target_is_directory=True)
    scope = "project" if client == "gemini" else "workspace"
    done = _install(home, client, "--scope", scope, str(repo / "prompts"))
    assert done.returncode == 2, done.stderr
    assert f"{folder} is a symlink" in done.stderr
    assert _listing(victim) == []  # nothing written outside the repository


@posix_only(SYMLINKS)
def test_the_path_walk_without_openat_refuses_the_same_links(home: Path, repo: Path,
                                                             tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    from promptops.install import configfile

    monkeypatch.setattr(configfile, "_DIR_FD", False)  # Windows' way, run here
    victim = tmp_path / "victim"
    victim.mkdir()
    (repo / ".vscode").symlink_to(victim, target_is_directory=True)
    done = _install(home, "vscode", "--scope", "workspace", str(repo / "prompts"))
    assert done.returncode == 2 and ".vscode is a symlink" in done.stderr
    (repo / ".mcp.json").symlink_to(home / ".claude.json")
    done = _install(home, "claude-code", "--scope", "project", str(repo / "prompts"))
    assert done.returncode == 2 and ".mcp.json is a symlink" in done.stderr
    (repo / ".cursor" / "mcp.json").mkdir(parents=True)
    done = _install(home, "cursor", "--scope", "workspace", str(repo / "prompts"))
    assert done.returncode == 2 and "is not a regular file" in done.stderr
    done = _install(home, "gemini", "--scope", "project", str(repo / "prompts"))
    assert done.returncode == 0, done.stderr


@posix_only(SYMLINKS)
def test_a_workspace_config_linked_to_dev_zero_is_refused_at_once(home: Path,
                                                                  repo: Path) -> None:
    (repo / ".cursor").mkdir()
    (repo / ".cursor" / "mcp.json").symlink_to("/dev/zero")
    done = _install(home, "cursor", "--scope", "workspace", str(repo / "prompts"))
    assert done.returncode == 2, done.stderr
    assert "mcp.json is a symlink" in done.stderr


def test_a_workspace_config_that_is_a_folder_is_refused(home: Path, repo: Path) -> None:
    (repo / ".vscode" / "mcp.json").mkdir(parents=True)
    done = _install(home, "vscode", "--scope", "workspace", str(repo / "prompts"))
    assert done.returncode == 2, done.stderr
    assert "mcp.json is not a regular file" in done.stderr


def test_a_config_over_the_size_bound_is_refused(home: Path, repo: Path) -> None:
    cfg = repo / ".mcp.json"
    with cfg.open("wb") as fh:  # sparse: 2 MiB of nothing, over the 1 MiB bound
        fh.truncate(2 * 2**20)
    done = _install(home, "claude-code", "--scope", "project", str(repo / "prompts"))
    assert done.returncode == 2, done.stderr
    assert ".mcp.json is larger than 1 MiB" in done.stderr
    assert cfg.stat().st_size == 2 * 2**20
    user = home / ".claude.json"
    with user.open("wb") as fh:  # the user's own file: 64 MiB
        fh.truncate(70 * 2**20)
    done = _install(home, "claude-code", "--scope", "user", str(repo / "prompts"))
    assert done.returncode == 2, done.stderr
    assert ".claude.json is larger than 64 MiB" in done.stderr


def test_a_bom_does_not_shift_the_column() -> None:
    from promptops.install.jsonedit import ConfigError, load

    with pytest.raises(ConfigError, match=r"^1:7: not valid JSON"):
        load('\ufeff{"a": NaN}', jsonc=False)


@posix_only(SYMLINKS)
def test_a_package_manifest_linked_outside_is_not_read(home: Path, repo: Path,
                                                       tmp_path: Path) -> None:
    outside = tmp_path / "outside.yaml"
    outside.write_text("name: read-from-outside\nversion: 1.0.0\ndescription: d\n")
    manifest = repo / "prompts" / "promptops.yaml"
    manifest.unlink()
    manifest.symlink_to(outside)
    done = _install(home, "cursor", str(repo / "prompts"))
    assert done.returncode == 2, done.stderr
    assert "promptops.yaml is a symlink" in done.stderr
    assert not (home / ".cursor").exists()


# --- the user's own files: a symlink is the user's choice (dotfiles), written through ---

@posix_only(SYMLINKS)
def test_user_config_kept_as_a_symlink_is_written_through(home: Path, repo: Path) -> None:
    dotfiles = home / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "claude.json"
    real.write_text('{\n  "mcpServers": {}\n}\n')
    real.chmod(0o640)
    link = home / ".claude.json"
    link.symlink_to(Path("dotfiles") / "claude.json")  # relative, as stow makes them
    done = _install(home, "claude-code", "--scope", "user", str(repo / "prompts"))
    assert done.returncode == 0, done.stderr
    assert link.is_symlink() and os.readlink(link) == "dotfiles/claude.json"
    assert "acme-prompts" in json.loads(real.read_text())["mcpServers"]
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    assert _listing(dotfiles) == ["claude.json"]  # no temp file left beside it
    assert f"(through the symlink {link})" in done.stderr


@posix_only(SYMLINKS)
def test_user_config_dangling_symlink_is_refused(home: Path, repo: Path) -> None:
    (home / ".cursor").mkdir()
    link = home / ".cursor" / "mcp.json"
    link.symlink_to(home / "dotfiles" / "missing.json")
    done = _install(home, "cursor", str(repo / "prompts"))
    assert done.returncode == 2, done.stderr
    assert "is a symlink to" in done.stderr and "which does not exist" in done.stderr
    assert link.is_symlink() and not (home / "dotfiles").exists()


@posix_only(SYMLINKS)
def test_user_config_linked_to_dev_zero_is_refused(home: Path, repo: Path) -> None:
    (home / ".cursor").mkdir()
    (home / ".cursor" / "mcp.json").symlink_to("/dev/zero")
    done = _install(home, "cursor", str(repo / "prompts"))
    assert done.returncode == 2, done.stderr
    assert "is not a regular file" in done.stderr


# --- defect 7: what the client itself would reject is "not valid JSON", exit 2 ---

@pytest.mark.parametrize(("text", "where"), [
    ("[" * 100_000, "1:201: not valid JSON"),
    ('{"mcpServers": {}, "x": ' + "[" * 5_000 + "]" * 5_000 + "}", "1:224: not valid JSON"),
    ('{\n  "mcpServers": {},\n  "limit": NaN\n}\n', "3:12: not valid JSON"),
    ('{"mcpServers": {}, "t": -Infinity}', "1:25: not valid JSON"),
    ('{"mcpServers": {}, "n": ' + "9" * 5_000 + "}", "1:25: not valid JSON"),
])
def test_strict_configs_the_client_rejects_are_not_valid_json(home: Path, repo: Path,
                                                              text: str, where: str) -> None:
    cfg = home / ".cursor" / "mcp.json"
    cfg.parent.mkdir()
    cfg.write_text(text)
    done = _install(home, "claude-code", "--scope", "user", "--config", str(cfg),
                    str(repo / "prompts"))
    assert done.returncode == 2, done.stderr
    assert f"{cfg}:{where}" in done.stderr
    assert cfg.read_text() == text
    assert _listing(cfg.parent) == ["mcp.json"]


def test_jsonc_with_infinity_is_not_valid_either(home: Path, repo: Path) -> None:
    cfg = home / ".config" / "Code" / "User" / "mcp.json"
    cfg.parent.mkdir(parents=True)
    text = '{\n  // mine\n  "servers": {},\n  "x": Infinity,\n}\n'
    cfg.write_text(text)
    done = _install(home, "vscode", str(repo / "prompts"))
    assert done.returncode == 2, done.stderr
    assert f"{cfg}:4:8: not valid JSON with comments" in done.stderr
    assert cfg.read_text() == text


def test_security_md_states_the_bounds_install_enforces() -> None:
    from promptops.install import configfile, jsonedit

    text = (Path(__file__).resolve().parents[2] / "SECURITY.md").read_text(encoding="utf-8")
    section = text.split("### What `promptops install` reads and writes")[1]
    for stated in (f"to {configfile.MAX_BYTES // 2**20} MiB at most",
                   f"{configfile.MAX_SHARED_BYTES // 2**20} MiB for a repository file",
                   f"deeper than {jsonedit.MAX_DEPTH} levels",
                   f"more than {jsonedit.MAX_NUMBER:,} characters"):
        assert stated in " ".join(section.split()), stated
