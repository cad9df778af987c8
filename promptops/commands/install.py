"""`promptops install CLIENT [PATH]`: write (or print) an MCP client's server entry.

The domain work (where, what, the minimal-edit merge) is in :mod:`promptops.install`;
this module reads the package's name, picks the file and says what it did.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import os
import shutil
from pathlib import Path

from promptops import __version__
from promptops.commands._common import package_dir
from promptops.console import Console
from promptops.errors import PromptopsError, UsageError
from promptops.install import clients


def _manifest_name(folder: Path) -> str:
    """The manifest's ``name``, read as a repository file: no symlink, a bounded read."""
    from promptops.install.configfile import read
    from promptops.pipeline.yamlio.loader import YamlProblem, load_yaml

    path = folder / "promptops.yaml"
    raw = read(path, root=folder).data
    if raw is None:
        raise UsageError(f"cannot read {path}: No such file or directory")
    try:
        data = load_yaml(str(path), raw).data
    except YamlProblem as exc:
        raise UsageError(str(exc.problem)) from exc
    name = data.get("name") if isinstance(data, dict) else None
    if not isinstance(name, str) or not name:
        raise UsageError(f"{path}: no `name`; pass --name")
    return name


def _repo_root(folder: Path) -> Path:
    """The repository the package is in (Claude Code keys local servers by it), else itself."""
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate
    return folder


def run(*, client: str, path: Path | None, name: str | None, scope: str | None,
        config: Path | None, force: bool, print_only: bool, worktree: bool,
        console: Console) -> int:
    if client not in clients.CLIENTS:
        raise UsageError(f"unknown client {client!r}; choose one of {', '.join(clients.CLIENTS)}")
    folder = package_dir(path).resolve()
    server = name or _manifest_name(folder)
    project = _repo_root(folder)
    scope = scope or clients.DEFAULT_SCOPE.get(client, "user")
    shared = scope in clients.SHARED_SCOPES
    extra = ("--worktree",) if worktree else ()
    if shared:  # committed: nothing of this machine (docs/authoring.md, "shared files")
        rel = os.path.relpath(folder, project).replace(os.sep, "/")
        package_arg = rel
        if client in ("vscode", "cursor"):  # both expand it in command, args and env
            package_arg = "${workspaceFolder}" + ("" if rel == "." else f"/{rel}")
        entry = clients.shared_entry(client, package_arg, extra_args=extra)
    else:
        entry = clients.server_entry(client, folder, extra_args=extra)
        if client == "copilot":
            entry["tools"] = ["*"]  # Copilot's format lists the tools to enable
    if not shared and clients.ephemeral_environment():
        console.info("warning: promptops runs from a temporary environment (uvx / pipx run); the "
             "entry would point into a cache that can be pruned: install it with "
             "`uv tool install promptops-mcp` or `pipx install promptops-mcp` first")
    if client == "json" and config is None:
        console.echo(json.dumps({"mcpServers": {server: entry}}, indent=2))
        return 0
    if client == "json":
        assert config is not None
        tgt = clients.Target("json", config, ("mcpServers",), False)
    else:
        tgt = clients.target(client, scope=scope, project=project)
        if config is not None:
            tgt = dataclasses.replace(tgt, file=config, root=None)  # the user's own choice
    change = clients.merged(tgt, server, entry, force=force)
    if print_only:
        diff = difflib.unified_diff(change.before.splitlines(keepends=True),
                                    change.after.splitlines(keepends=True),
                                    str(tgt.file), str(tgt.file))
        console.echo("".join(diff).rstrip("\n"))
        return 0
    if client == "claude-desktop" and config is None and not tgt.file.parent.is_dir():
        raise PromptopsError(
            f"Claude Desktop's config folder {tgt.file.parent} does not exist: install and "
            "start Claude Desktop once, or pass --config FILE (--print shows the entry)")
    clients.write(change)
    verb = "replaced" if change.replaced else "added"
    through = f" (through the symlink {tgt.file})" if change.real != tgt.file else ""
    console.info(f"{verb} server {server!r} in {change.real} ({'.'.join(tgt.container)})"
                 f"{through}")
    if shared:
        console.info(f"{tgt.file.name} is meant to be committed: a teammate needs "
                     f"`{clients.SHARED_COMMAND}` {__version__} or later on PATH, and git")
        if shutil.which(clients.SHARED_COMMAND) is None:
            console.info(f"warning: `{clients.SHARED_COMMAND}` is not on this shell's PATH, "
                         "so the entry will not start here either until it is")
    console.info(f"restart {client} (or reload its MCP servers) to use it")
    return 0
