"""`promptops build`: a commit -> an immutable, reproducible bundle file."""

from __future__ import annotations

from pathlib import Path

from promptops.bundle import compile_bundle, inside_folder, write_bundle
from promptops.commands._common import package_dir
from promptops.console import echo, info
from promptops.errors import PromptopsError
from promptops.pipeline import bundle_at
from promptops.sources import head_is_dirty


def run(
    path: Path | None, ref: str, out: Path, worktree: bool, force: bool, no_lint: bool = False
) -> int:
    folder = package_dir(path)
    rev = None if worktree else ref
    if not worktree and ref == "HEAD" and head_is_dirty(folder):
        info(
            "note: the working tree has uncommitted changes; building HEAD as committed "
            "(use --worktree to build the working tree)"
        )
    package, failure = None, ""
    if not no_lint:
        from promptops.commands.lint import lint_gate_loading

        ok, lines, summary, package = lint_gate_loading(folder, rev)
        if not ok:
            failure = f"lint fails ({summary}); fix the findings or build with --no-lint:\n"
            failure += "\n".join(lines)
    # The package lint loaded makes the bundle too. Otherwise (lint cached, --no-lint) the
    # pipeline loads it, and a package that does not load reports its positioned problems
    # there, before any lint verdict, as it always did.
    bundle = compile_bundle(package) if package is not None else bundle_at(folder, rev)
    if failure:
        raise PromptopsError(failure)
    # An output folder inside the package (the default `dist/` run from it) is written
    # like package content: never through a committed symlink.
    root = folder if inside_folder(out, folder) else None
    written_path, written = write_bundle(bundle, out, force=force, root=root)
    verb = "wrote" if written else "unchanged"
    info(f"{verb} {written_path} ({len(bundle['prompts'])} prompts, {bundle['digest']})")
    echo(str(written_path))
    return 0
