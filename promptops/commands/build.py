"""`promptops build`: a commit -> an immutable, reproducible bundle file."""

from __future__ import annotations

from pathlib import Path

from promptops.bundle import write_bundle
from promptops.commands._common import package_dir
from promptops.console import echo, info
from promptops.pipeline import bundle_at
from promptops.sources import head_is_dirty


def run(path: Path | None, ref: str, out: Path, worktree: bool, force: bool) -> int:
    folder = package_dir(path)
    if worktree:
        bundle = bundle_at(folder, None)
    else:
        if ref == "HEAD" and head_is_dirty(folder):
            info(
                "note: the working tree has uncommitted changes; building HEAD as committed "
                "(use --worktree to build the working tree)"
            )
        bundle = bundle_at(folder, ref)
    written_path, written = write_bundle(bundle, out, force=force)
    verb = "wrote" if written else "unchanged"
    info(f"{verb} {written_path} ({len(bundle['prompts'])} prompts, {bundle['digest']})")
    echo(str(written_path))
    return 0
