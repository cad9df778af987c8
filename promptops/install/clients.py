"""Where each MCP client keeps its servers, and the entry that starts this promptops.

The README's hand-written config (``"command": "promptops"``) fails in every GUI client
with ``spawn promptops ENOENT``: Claude Desktop and Cursor are started by launchd or a
display manager with a minimal PATH (``/usr/bin:/bin:/usr/sbin:/sbin`` on macOS) that
holds neither a virtualenv's ``bin`` nor ``~/.local/bin``, and a client's working
directory is undefined. So the entry names everything absolutely:

* **the command** is the console script of the *running* environment (``sysconfig``'s
  scripts folder, then the user scheme), never ``shutil.which`` (another promptops on
  PATH) and never a resolved ``sys.executable`` (a venv's python resolves to the base
  interpreter, without promptops). Without a console script (a source checkout), it is
  ``python -P -m promptops``: ``-P`` keeps the client's working directory off
  ``sys.path``, where a stray ``typer.py`` would shadow ours.
* **the package** is its absolute, resolved folder (the subfolder of a monorepo).
* **git** is recorded as ``PROMPTOPS_GIT`` (the installing shell's ``git``, unresolved so
  a Homebrew upgrade keeps working): serve runs git when its cache is cold, and
  ``/opt/homebrew/bin`` is not on a GUI app's PATH either.

Locations and shapes (sources in docs/authoring.md): Claude Desktop
``claude_desktop_config.json`` (``mcpServers``), Claude Code ``~/.claude.json``
(``projects[<repo>].mcpServers`` for the default local scope, ``mcpServers`` for user)
or ``<repo>/.mcp.json``, VS Code ``mcp.json`` (``servers``, ``"type": "stdio"``, JSONC),
Cursor ``~/.cursor/mcp.json`` or ``<repo>/.cursor/mcp.json`` (``mcpServers``).
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

from promptops.errors import UsageError
from promptops.install import jsonedit

CLIENTS = ("claude-desktop", "claude-code", "vscode", "cursor", "json")
SCOPES = {
    "claude-desktop": ("user",),
    "claude-code": ("local", "user", "project"),
    "vscode": ("user", "workspace"),
    "cursor": ("user", "workspace"),
    "json": ("user",),
}
DEFAULT_SCOPE = {"claude-code": "local"}
SHARED_SCOPES = ("project", "workspace")  # files usually committed: not this machine's


@dataclass(frozen=True)
class Target:
    """One client's config file and the JSON path of the object mapping names to servers."""

    client: str
    file: Path
    container: tuple[str, ...]
    jsonc: bool  # VS Code reads mcp.json with jsonc-parser; the others are strict JSON


def server_command() -> list[str]:
    """The absolute argv that starts *this* promptops, whatever PATH the client has."""
    exe = "promptops.exe" if os.name == "nt" else "promptops"
    for scheme in (sysconfig.get_default_scheme(), f"{os.name}_user"):
        try:
            scripts = Path(sysconfig.get_path("scripts", scheme))
        except KeyError:
            continue
        if (scripts / exe).is_file():
            return [str(scripts / exe)]
    return [os.path.abspath(sys.executable), "-P", "-m", "promptops"]


def ephemeral_environment(prefix: str = sys.prefix) -> bool:
    """Whether promptops runs from a cache (``uvx``, ``pipx run``) that may be pruned."""
    p = prefix.replace("\\", "/")
    return "/uv/archive-v" in p or "/pipx/.cache/" in p or "/.cache/uv/" in p


# A client's server entry: "type", "command" (str), "args" (list), "env" (str -> str).
Entry = dict[str, str | list[str] | dict[str, str]]


def server_entry(client: str, package: Path, *, command: list[str] | None = None,
                 git: str | None = None, extra_args: tuple[str, ...] = ()) -> Entry:
    """The stdio server entry for ``client`` serving ``package``."""
    argv = command or server_command()
    entry: Entry = {}
    if client in ("vscode", "claude-code"):
        entry["type"] = "stdio"  # VS Code requires it; `claude mcp add` writes it
    entry["command"] = argv[0]
    entry["args"] = [*argv[1:], "serve", *extra_args, str(package)]
    git = git if git is not None else shutil.which("git")
    if git:  # serve runs git when its cache is cold; a GUI app's PATH may not hold it
        git = os.path.abspath(git)
        entry["env"] = {"PROMPTOPS_GIT": git, "GIT_PYTHON_GIT_EXECUTABLE": git}
    else:
        entry["env"] = {}
    return entry


def _home() -> Path:
    return Path(os.path.expanduser("~"))


def _config_home(home: Path) -> Path:
    return Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")


def _appdata(home: Path) -> Path:
    return Path(os.environ.get("APPDATA") or home / "AppData" / "Roaming")


def claude_desktop_dir(home: Path, platform: str) -> Path:
    if platform == "darwin":
        return home / "Library" / "Application Support" / "Claude"
    if platform == "win32":
        roaming = _appdata(home) / "Claude"
        if roaming.is_dir():
            return roaming
        local = Path(os.environ.get("LOCALAPPDATA") or home / "AppData" / "Local")
        store = sorted((local / "Packages").glob("Claude_*/LocalCache/Roaming/Claude"))
        return store[0] if store else roaming  # the Microsoft Store (MSIX) install
    return _config_home(home) / "Claude"  # no official Linux app: the MCP SDK's convention


def target(client: str, *, scope: str, project: Path, home: Path | None = None,
           platform: str = sys.platform) -> Target:
    """Where ``client`` reads its servers for ``scope``; ``project`` is the repository root."""
    home = home or _home()
    if scope not in SCOPES[client]:
        raise UsageError(f"{client} has no {scope!r} scope; choose one of "
                         f"{', '.join(SCOPES[client])}")
    if client == "claude-desktop":
        folder = claude_desktop_dir(home, platform)
        return Target(client, folder / "claude_desktop_config.json", ("mcpServers",), False)
    if client == "claude-code":
        if scope == "project":
            return Target(client, project / ".mcp.json", ("mcpServers",), False)
        path = ("projects", str(project), "mcpServers") if scope == "local" else ("mcpServers",)
        return Target(client, home / ".claude.json", path, False)
    if client == "vscode":
        if scope == "workspace":
            return Target(client, project / ".vscode" / "mcp.json", ("servers",), True)
        if platform == "darwin":
            user = home / "Library" / "Application Support" / "Code" / "User"
        elif platform == "win32":
            user = _appdata(home) / "Code" / "User"
        else:
            user = _config_home(home) / "Code" / "User"
        return Target(client, user / "mcp.json", ("servers",), True)
    if client == "cursor":
        folder = project / ".cursor" if scope == "workspace" else home / ".cursor"
        return Target(client, folder / "mcp.json", ("mcpServers",), False)
    raise UsageError(f"unknown client {client!r}; choose one of {', '.join(CLIENTS)}")


@dataclass(frozen=True)
class Change:
    """What an install did (or, printed, would do) to one file."""

    file: Path
    before: str
    after: str
    replaced: bool


def merged(tgt: Target, name: str, entry: Entry, *, force: bool) -> Change:
    """The file's new text with the entry in it; nothing is written."""
    try:
        raw = tgt.file.read_bytes() if tgt.file.exists() else b""
    except OSError as exc:
        raise UsageError(f"cannot read {tgt.file}: {exc.strerror}") from exc
    try:
        before = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{tgt.file}: not UTF-8 text (byte {exc.start})") from None
    try:
        existing = jsonedit.load(before, jsonc=tgt.jsonc)[1] if before.strip("\ufeff \r\n\t") \
            else {}
        after = jsonedit.merge(before, tgt.container, name, entry, jsonc=tgt.jsonc, force=force)
        _, value = jsonedit.load(after, jsonc=tgt.jsonc)
    except jsonedit.ConfigError as exc:
        raise type(exc)(f"{tgt.file}:{exc}" if str(exc)[:1].isdigit() else
                        f"{tgt.file}: {exc}") from None
    if jsonedit.lookup(value, (*tgt.container, name)) != entry:  # the check before any write
        raise AssertionError(f"merging into {tgt.file} did not produce the entry")
    replaced = jsonedit.lookup(existing, (*tgt.container, name)) is not None
    return Change(tgt.file, before, after, replaced)


def write(change: Change) -> None:
    """Write atomically, keeping the old file's mode (new files: 0600, like Claude Code)."""
    from promptops.fsutil import atomic_write

    try:
        mode = stat.S_IMODE(change.file.stat().st_mode)
    except FileNotFoundError:
        mode = 0o600
    atomic_write(change.file, change.after.encode("utf-8"), mode=mode)
