"""`promptops build`: a commit -> an immutable, reproducible bundle file."""

from __future__ import annotations

from pathlib import Path

from promptops.bundle import write_bundle
from promptops.commands._common import package_dir
from promptops.console import echo, info
from promptops.pipeline import bundle_at
from promptops.sources import head_is_dirty


def run(
    path: Path | None, ref: str, out: Path, worktree: bool, force: bool, no_lint: bool = False
) -> int:
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
    if not no_lint:  # after loading, so a broken package reports as it always did
        from promptops.commands.lint import lint_gate
        from promptops.errors import PromptopsError

        ok, lines, summary = lint_gate(folder, None if worktree else ref)
        if not ok:
            raise PromptopsError(
                f"lint fails ({summary}); fix the findings or build with --no-lint:\n"
                + "\n".join(lines)
            )
    written_path, written = write_bundle(bundle, out, force=force)
    verb = "wrote" if written else "unchanged"
    info(f"{verb} {written_path} ({len(bundle['prompts'])} prompts, {bundle['digest']})")
    echo(str(written_path))
    return 0
