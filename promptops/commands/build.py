"""`promptops build`: a commit -> an immutable, reproducible bundle file."""

from __future__ import annotations

from pathlib import Path

from promptops.commands._common import package_dir
from promptops.console import Console
from promptops.errors import PromptopsError
from promptops.fsutil import inside_folder
from promptops.pipeline import collector
from promptops.pipeline.build import Build
from promptops.pipeline.bundle_stream import write_streamed
from promptops.pipeline.source import head_is_dirty


def run(
    *, path: Path | None, ref: str, out: Path, worktree: bool, force: bool, no_lint: bool,
    console: Console,
) -> int:
    folder = package_dir(path)
    rev = None if worktree else ref
    if not worktree and ref == "HEAD" and head_is_dirty(folder):
        console.info(
            "note: the working tree has uncommitted changes; building HEAD as committed "
            "(use --worktree to build the working tree)"
        )
    build, failure = Build(folder, rev, keep_asts=not no_lint), ""
    if not no_lint:
        from promptops.lint.runner import gate, lint_package

        with console.status("build: lint"):
            ok, lines, summary = gate(lint_package(build), console)
        if not ok:
            failure = f"lint fails ({summary}); fix the findings or build with --no-lint:\n"
            failure += "\n".join(lines)
    # The package lint validated makes the bundle too (one Build). Otherwise (lint cached,
    # --no-lint) it is validated here, and a package that does not validate reports its
    # positioned problems before any lint verdict, as it always did.
    # The cycle collector is paused until the package and the bundle are freed (by
    # refcounting, inside the pause): a pause that ended with them alive let the next
    # allocation's pass walk all of them (~1 s of a 10,000-prompt build).
    with collector.paused():
        package = build.package  # the package's own problems come before lint's verdict
        del build
        if failure:
            raise PromptopsError(failure)
        # An output folder inside the package (the default `dist/` run from it) is written
        # like package content: never through a committed symlink.
        root = folder if inside_folder(out, folder) else None
        with console.status("build: compiling the bundle"):
            # compiled as it is written: its hashing and writing on the second core
            bundle, written_path, written = write_streamed(package, out, force=force,
                                                           root=root)
        count, digest = len(bundle["prompts"]), bundle["digest"]
        del bundle, package
    verb = "wrote" if written else "unchanged"
    console.info(f"{verb} {written_path} ({count} prompts, {digest})")
    console.echo(str(written_path))
    return 0
