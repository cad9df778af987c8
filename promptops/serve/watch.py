"""`promptops serve --worktree`: serve the working tree and follow every save.

The authoring loop is edit, save, look in the client. HEAD mode serves only commits, so
a prompt engineer trying a new prompt had to commit it to see it. This mode serves what
is on disk instead, as a development mode that says so: the rendered ``_meta`` carries
``promptops/worktree: true`` and no commit id (the bundle has none).

Why it is built this way:

* **watchfiles** (Rust ``notify``: inotify, FSEvents, ReadDirectoryChangesW) rather than a
  stat loop: a package of 5,000 files would cost a stat of every file every tick, and
  the OS already knows what changed. It coalesces for us: a batch is yielded once no new
  change arrived for ``STEP_MS`` (and at the latest after ``DEBOUNCE_MS`` of continuous
  changes), so "save all", a formatter run or a ``git checkout`` of thousands of files is
  one reload. Changes made while a reload runs are collected and become the next batch.
* **A batch is a set without order.** vim and JetBrains "safe write" deliver
  ``{added x, deleted x}`` in one batch; the reload therefore never interprets change
  kinds: any relevant batch re-validates the whole tree (through a :class:`FileMemo`
  kept for the process, so only changed files are parsed again).
* **The filter** drops what cannot change the served set: git's and our own folders
  (``.git``, ``.promptops``, ``dist``), and editor droppings that watchfiles' default
  filter misses (JetBrains writes ``x.prompt.yaml___jb_tmp___``, vim probes with a
  file named ``4913``).
* **A broken save keeps the last good set.** The problems are logged with file, line
  and column to stderr and to every session that enabled logging; the next save that
  builds is served and announced with ``notifications/prompts/list_changed``. A tree
  that is broken at start is served as an empty set rather than refused: the client
  stays connected and the first fixing save brings the prompts in.
* **Cold paths stay cold:** ``import watchfiles`` happens in the watcher thread, so
  ``serve`` in HEAD mode never pays for it, and HEAD mode's "the working tree has
  changes" notice runs ``git status`` in a background thread after the server answers.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from promptops.git import executable, no_optional_locks
from promptops.serve.follow import Background, Log, failure

if TYPE_CHECKING:
    from promptops.pipeline.bundle import Bundle
    from promptops.pipeline.memo import FileMemo

STEP_MS = 150  # quiet time that ends a batch: longer than the gaps inside one save
DEBOUNCE_MS = 1600  # the longest a continuous stream of changes is held back

IGNORED_DIRS = frozenset({
    ".git", ".hg", ".svn", ".promptops", "dist", "node_modules", "__pycache__", ".venv",
    ".idea", ".mypy_cache", ".pytest_cache", ".ruff_cache",
})
IGNORED_NAMES = re.compile(r"""(
    ~$                          # vim/emacs/gedit backups: x.yaml~
  | \.sw[a-p]$ | ^4913$         # vim swap files, and vim's write-permission probe
  | ___jb_(tmp|old|bak)___$     # JetBrains "safe write"
  | ^\.\# | ^\#.*\#$            # emacs lock and auto-save files
  | \.(tmp|temp|crswap|part)$   # tempfile + rename savers, Chrome/VS Code remote swaps
  | ^\.DS_Store$ | ^Thumbs\.db$
)""", re.X)


def relevant(root: Path, path: str) -> bool:
    """Can a change to ``path`` change what the package at ``root`` serves?"""
    try:
        rel = Path(os.path.normpath(path)).relative_to(root)
    except ValueError:
        return False
    if any(part in IGNORED_DIRS for part in rel.parts):
        return False
    return not IGNORED_NAMES.search(rel.name)


class Worktree(Background):
    """The bundles of the package folders' working trees, rebuilt after every save."""

    THREAD = "promptops-worktree"

    def __init__(self, package_dirs: Iterable[Path], *, log: Log) -> None:
        super().__init__()
        self._dirs = [d.resolve() for d in package_dirs]
        self._log = log
        self._memo: FileMemo | None = None
        self.ready = threading.Event()  # set once the OS watch is in place

    def initial(self) -> list[Bundle]:
        """The working trees' bundles now; an empty set (logged) when they do not build."""
        bundles = self._try_build(start=True)
        return bundles if bundles is not None else []

    def build(self) -> list[Bundle]:
        """Every package from its working tree; raises on the first problem."""
        from promptops.pipeline.build import Build
        from promptops.pipeline.memo import FileMemo
        from promptops.serve.catalog import check_names

        if self._memo is None:  # a serving process never lints: files drop their YAML
            self._memo = FileMemo(keep_yaml=False)
        bundles = [Build(d, None, memo=self._memo).bundle for d in self._dirs]
        check_names(bundles)
        return bundles

    def _try_build(self, *, start: bool = False) -> list[Bundle] | None:
        try:
            return self.build()
        except Exception as exc:  # a broken save must never cost the served set
            keep = ("serving no prompts until it does" if start
                    else "still serving the last good prompts")
            self._log(f"the working tree does not build; {keep}:\n{failure(exc)}")
            return None

    # -- following saves ----------------------------------------------------------------

    def _follow(self, on_change: Callable[[list[Bundle]], object]) -> None:
        try:
            self._loop(on_change)
        except Exception:  # the watcher must say why it died; serving goes on
            import traceback

            self._log("internal error in the working-tree watcher; edits are no longer "
                      "followed:\n" + traceback.format_exc())

    def _loop(self, on_change: Callable[[list[Bundle]], object]) -> None:
        import watchfiles  # deferred: only --worktree pays for it

        roots = self._dirs

        def keep(_change: object, path: str) -> bool:
            return any(relevant(root, path) for root in roots)

        # yield_on_timeout with a short rust_timeout: the loop wakes to see the stop
        # event, and its first (empty) yield says the OS watch is in place.
        for batch in watchfiles.watch(*roots, watch_filter=keep, debounce=DEBOUNCE_MS,
                                      step=STEP_MS, stop_event=self._stop, rust_timeout=500,
                                      yield_on_timeout=True, raise_interrupt=False):
            if not self.ready.is_set():
                self.ready.set()
                self._log("watching " + ", ".join(str(r) for r in roots) + " for changes")
            if not batch or self._stop.is_set():
                continue
            bundles = self._try_build()
            if bundles is not None:
                on_change(bundles)


def dirty_notice(package_dirs: Iterable[Path], log: Log) -> threading.Thread:
    """In HEAD mode: say once, in the background, when a working tree differs from HEAD.

    ``serve`` serves commits; a prompt saved but not committed is invisible to the
    client, which is the first thing a new user trips over. ``git status`` runs in a
    daemon thread so the notice never delays the first answer.
    """
    dirs = list(package_dirs)

    def check() -> None:
        import subprocess  # deferred: a start from the cache spawns nothing before this

        for directory in dirs:
            try:
                out = subprocess.run(
                    [executable(), "status", "--porcelain", "--untracked-files=normal",
                     "--", "."],
                    cwd=directory, capture_output=True, timeout=30, check=False,
                    stdin=subprocess.DEVNULL, env=no_optional_locks(),
                )
            except (OSError, subprocess.SubprocessError):
                continue
            if out.returncode == 0 and out.stdout.strip():
                count = len(out.stdout.strip().splitlines())
                log(f"note: {directory} has {count} uncommitted change"
                    f"{'s' if count != 1 else ''} that this server does not serve (it serves "
                    "commits); `promptops serve --worktree` serves the working tree")

    thread = threading.Thread(target=check, name="promptops-dirty-notice", daemon=True)
    thread.start()
    return thread
