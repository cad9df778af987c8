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

A file meant to be committed (``--scope project`` or ``workspace``) gets the opposite:
nothing of this machine. The command is ``promptops`` as found on PATH (these clients
are started from a terminal or resolve the login shell's PATH), the package is relative
to the project (or ``${workspaceFolder}/...`` where the client expands it), and no
``env`` names this machine's git; :func:`shared_entry` builds it.

Locations and shapes (sources in docs/authoring.md): Claude Desktop
``claude_desktop_config.json`` (``mcpServers``), Claude Code ``~/.claude.json``
(``projects[<repo>].mcpServers`` for the default local scope, ``mcpServers`` for user)
or ``<repo>/.mcp.json``, VS Code ``mcp.json`` (``servers``, ``"type": "stdio"``, JSONC),
Cursor ``~/.cursor/mcp.json`` or ``<repo>/.cursor/mcp.json`` (``mcpServers``, comments),
Gemini CLI ``~/.gemini/settings.json`` or ``<repo>/.gemini/settings.json``
(``mcpServers``, comments but no trailing commas), GitHub Copilot CLI (and VS Code's
discovery) ``~/.copilot/mcp-config.json`` or ``<repo>/.mcp.json`` (``mcpServers``);
Goose's YAML ``config.yaml`` is :mod:`~promptops.install.yamledit`'s.
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

from promptops.errors import UsageError
from promptops.install import jsonedit

CLIENTS = ("claude-desktop", "claude-code", "vscode", "cursor", "gemini", "goose", "copilot",
           "json")
SCOPES = {
    "claude-desktop": ("user",),
    "claude-code": ("local", "user", "project"),
    "vscode": ("user", "workspace"),
    "cursor": ("user", "workspace"),
    "gemini": ("user", "project"),
    "goose": ("user",),
    "copilot": ("user", "project"),
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
    jsonc: bool  # VS Code and Cursor read mcp.json as JSONC, Gemini strips comments
    root: Path | None = None  # the repository, for a file it commits (configfile.py)
    commas: bool | None = None  # trailing commas accepted (default: as jsonc)
    yaml: bool = False  # Goose: config.yaml


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
    if client in ("vscode", "claude-code", "copilot"):
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


SHARED_COMMAND = "promptops"  # what a teammate's PATH holds (docs/authoring.md)


def shared_entry(client: str, package: str, *, extra_args: tuple[str, ...] = ()) -> Entry:
    """The entry for a committed file: ``promptops`` from PATH, ``package`` as given
    (relative, or ``${workspaceFolder}/...``), no ``env`` naming this machine's git."""
    entry: Entry = {}
    if client in ("vscode", "claude-code", "copilot"):
        entry["type"] = "stdio"
    entry["command"] = SHARED_COMMAND
    entry["args"] = ["serve", *extra_args, package]
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
            return Target(client, project / ".mcp.json", ("mcpServers",), False, project)
        path = ("projects", str(project), "mcpServers") if scope == "local" else ("mcpServers",)
        return Target(client, home / ".claude.json", path, False)
    if client == "vscode":
        if scope == "workspace":
            return Target(client, project / ".vscode" / "mcp.json", ("servers",), True,
                          project)
        if platform == "darwin":
            user = home / "Library" / "Application Support" / "Code" / "User"
        elif platform == "win32":
            user = _appdata(home) / "Code" / "User"
        else:
            user = _config_home(home) / "Code" / "User"
        return Target(client, user / "mcp.json", ("servers",), True)
    if client == "cursor":  # comments, as its users write them; trailing commas: refused
        if scope == "workspace":
            return Target(client, project / ".cursor" / "mcp.json", ("mcpServers",), True,
                          project, commas=False)
        return Target(client, home / ".cursor" / "mcp.json", ("mcpServers",), True,
                      commas=False)
    if client == "gemini":  # settings.json through strip-json-comments, then JSON.parse
        if scope == "project":
            return Target(client, project / ".gemini" / "settings.json", ("mcpServers",),
                          True, project, commas=False)
        return Target(client, home / ".gemini" / "settings.json", ("mcpServers",), True,
                      commas=False)
    if client == "copilot":
        if scope == "project":  # the portable file Claude Code, Copilot CLI and VS Code read
            return Target(client, project / ".mcp.json", ("mcpServers",), False, project)
        base = Path(os.environ["COPILOT_HOME"]) if os.environ.get("COPILOT_HOME") \
            else home / ".copilot"
        return Target(client, base / "mcp-config.json", ("mcpServers",), False)
    if client == "goose":
        if platform == "win32":
            folder = _appdata(home) / "Block" / "goose" / "config"
        else:
            folder = _config_home(home) / "goose"
        return Target(client, folder / "config.yaml", ("extensions",), False, yaml=True)
    raise UsageError(f"unknown client {client!r}; choose one of {', '.join(CLIENTS)}")


@dataclass(frozen=True)
class Change:
    """What an install did (or, printed, would do) to one file.

    ``real`` is where the text is written: ``file`` itself, or the final target of a user
    file kept as a symlink (written through, the link kept: configfile.py).
    """

    file: Path
    before: str
    after: str
    replaced: bool
    real: Path
    root: Path | None = None


def merged(tgt: Target, name: str, entry: Entry, *, force: bool) -> Change:
    """The file's new text with the entry in it; nothing is written."""
    from promptops.install import configfile

    loaded = configfile.read(tgt.file, root=tgt.root)
    raw = loaded.data or b""
    try:
        before = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{tgt.file}: not UTF-8 text (byte {exc.start})") from None
    if tgt.yaml:
        from promptops.install import yamledit

        after, replaced = yamledit.merge(tgt.file, before, tgt.container[0], name,
                                         yamledit.goose_extension(name, entry), force=force)
        return Change(tgt.file, before, after, replaced, loaded.real, tgt.root)
    try:
        existing = jsonedit.load(before, jsonc=tgt.jsonc, commas=tgt.commas)[1] \
            if before.strip("\ufeff \r\n\t") else {}
        after = jsonedit.merge(before, tgt.container, name, entry, jsonc=tgt.jsonc,
                               force=force, commas=tgt.commas)
        _, value = jsonedit.load(after, jsonc=tgt.jsonc, commas=tgt.commas)
    except jsonedit.ConfigError as exc:
        raise type(exc)(f"{tgt.file}:{exc}" if str(exc)[:1].isdigit() else
                        f"{tgt.file}: {exc}") from None
    if jsonedit.lookup(value, (*tgt.container, name)) != entry:  # the check before any write
        raise AssertionError(f"merging into {tgt.file} did not produce the entry")
    replaced = jsonedit.lookup(existing, (*tgt.container, name)) is not None
    return Change(tgt.file, before, after, replaced, loaded.real, tgt.root)


def write(change: Change) -> None:
    """Write atomically where the change says (configfile.write), keeping the mode."""
    from promptops.install import configfile

    configfile.write(change.real, change.after.encode("utf-8"), root=change.root)
