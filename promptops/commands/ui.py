"""`promptops ui`: the web catalog and playground on 127.0.0.1 (docs/ui.md)."""

from __future__ import annotations

from pathlib import Path

from promptops.console import Console


def run(*, path: Path | None, worktree: bool, port: int, no_browser: bool,
        console: Console) -> int:
    from promptops.ui.server import run as serve_ui

    root = path if path is not None else Path.cwd()
    serve_ui(root, worktree=worktree, port=port,
             announce=lambda url: console.echo(f"promptops ui: {url}"),
             log=console.info,
             open_browser=not no_browser)
    return 0
