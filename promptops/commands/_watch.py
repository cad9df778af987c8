"""``--watch`` for ``promptops test`` and ``promptops lint``: run, then re-run on every save.

The loop is the working-tree watch ``serve --worktree`` uses
(:mod:`promptops.pipeline.saves`: watchfiles, batches that coalesce "save all", the
editor-dropping filter), so the three agree on what a save is. Each command decides what
a save touches (``test`` re-runs the cases of the prompts and test files it changed;
``lint`` re-lints through its cache, which re-checks only the changed prompts).

* **Nothing saved during a run is lost**: the tree is stamped before the first run, and
  compared once the OS watch is in place (as ``serve --worktree`` does); saves during a
  later run are collected by the watch and become the next batch.
* **A run that fails is reported, never fatal**: a package that does not load prints its
  positioned problems (through the CLI's own error handler, passed in) and the loop waits
  for the save that fixes it.
* **Ctrl-C ends it with exit status 0**: stopping a watch is how it is used, not a
  failure; the exit status of the runs is for CI, which does not watch.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from pathlib import Path

from promptops.console import Console
from promptops.pipeline.saves import Saves, Stamp, changed_since, stamp

# One run: None = everything (the first run), else the package-relative paths saved.
Run = Callable[[set[str] | None], object]
OnError = Callable[[BaseException, Console], int]


def follow(folder: Path, run: Run, console: Console, on_error: OnError) -> int:
    """``run(None)``, then ``run(saved paths)`` after every save under ``folder``; until
    Ctrl-C, which returns 0."""
    root = folder.resolve()
    saves = Saves([root])
    if hasattr(signal, "pthread_sigmask"):  # a watch runs until it is told to stop: a mask
        # inherited from a parent that blocked them (an in-process `serve`) must not keep
        # Ctrl-C from it
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        before: Stamp | None = stamp([root])
        _guarded(run, None, console, on_error)
        console.info(f"watching {folder} for changes (Ctrl-C to stop)")
        for batch in saves.batches(raise_interrupt=True):
            if before is not None:  # the first yield: the watch is in place
                batch = batch | {Path(p) for p in changed_since(before, [root])}
                before = None
            if not batch:
                continue
            saved = {_rel(root, p) for p in batch}
            console.echo(console.style(f"\n── saved: {_names(saved)}", bold=True))
            _guarded(run, saved, console, on_error)
            console.info("watching for changes (Ctrl-C to stop)")
    except KeyboardInterrupt:
        console.info("stopped watching")
        return 0
    return 0


def _guarded(run: Run, saved: set[str] | None, console: Console, on_error: OnError) -> None:
    try:
        run(saved)
    except KeyboardInterrupt:
        raise
    except Exception as exc:  # reported as the command would; the watch goes on
        on_error(exc, console)


def _rel(root: Path, path: Path) -> str:
    try:
        return Path(os.path.normpath(path)).relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def _names(saved: set[str]) -> str:
    shown = sorted(saved)
    return ", ".join(shown[:5]) + (f" and {len(shown) - 5} more" if len(shown) > 5 else "")
