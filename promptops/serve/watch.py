"""`promptops serve --worktree`: serve the working tree and follow every save.

The authoring loop is edit, save, look in the client. HEAD mode serves only commits, so
a prompt engineer trying a new prompt had to commit it to see it. This mode serves what
is on disk instead, as a development mode that says so: the rendered ``_meta`` carries
``promptops/worktree: true`` and no commit id (the bundle has none).

Why it is built this way:

* **The watch is shared** (:mod:`promptops.pipeline.saves`): watchfiles, batches that
  coalesce "save all" and checkouts, and a filter for editor droppings, the same for
  ``promptops test --watch`` and ``promptops lint --watch``.
* **A batch is a set without order.** vim and JetBrains "safe write" deliver
  ``{added x, deleted x}`` in one batch; the reload therefore never interprets change
  kinds: any relevant batch re-validates the whole tree (through a :class:`FileMemo`
  kept for the process, so only changed files are parsed again).
* **No save is lost at start** (issue 24): the server answers ``initialize`` before the
  OS watch is in place (the watcher thread imports watchfiles and sets the watch up while
  the first requests are answered: holding them back would cost every start 0.2-0.7 s,
  seconds under load). :meth:`Worktree.initial` stamps the tree before it reads it, and
  once the watch is in place the watcher compares: a save made in between is rebuilt,
  served and announced with ``notifications/prompts/list_changed`` like any other.
* **A broken save keeps the last good set.** The problems are logged with file, line
  and column to stderr and, as an ``error`` ``notifications/message``, to every client
  that may hear it (docs/serve.md); the next save that builds is served, announced
  with ``notifications/prompts/list_changed`` and logged at ``info``. A tree that is
  broken at start is served as an empty set rather than refused: the client stays
  connected and the first fixing save brings the prompts in.
* **Cold paths stay cold:** ``import watchfiles`` happens in the watcher thread, so
  ``serve`` in HEAD mode never pays for it, and HEAD mode's "the working tree has
  changes" notice runs ``git status`` in a background thread after the server answers.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from promptops.git import executable, no_optional_locks
from promptops.pipeline.saves import (  # noqa: F401  (IGNORED_*, relevant: re-exported)
    IGNORED_DIRS,
    IGNORED_NAMES,
    Saves,
    Stamp,
    changed_since,
    relevant,
    stamp,
)
from promptops.serve.background import Background, BuildFailed, Log, Notify, failure

if TYPE_CHECKING:
    from promptops.pipeline.bundle_types import Bundle
    from promptops.pipeline.memo import FileMemo


class Worktree(Background):
    """The bundles of the package folders' working trees, rebuilt after every save."""

    THREAD = "promptops-worktree"

    def __init__(self, package_dirs: Iterable[Path], *, log: Log,
                 notify: Notify | None = None) -> None:
        super().__init__(log, notify)
        self._dirs = [d.resolve() for d in package_dirs]
        self._memo: FileMemo | None = None
        self._stamp: Stamp | None = None  # the tree as initial() read it, until the watch
        self._broken = False  # the last build failed: the next good one is news
        self.ready = threading.Event()  # set once the OS watch is in place

    def initial(self) -> list[Bundle]:
        """The working trees' bundles now; an empty set (logged) when they do not build.

        The tree is stamped first: a save after this, before the watch is in place, is
        found by comparing (see the module docstring)."""
        self._stamp = stamp(self._dirs)
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
            bundles = self.build()
        except Exception as exc:  # a broken save must never cost the served set
            keep = ("serving no prompts until it does" if start
                    else "still serving the last good prompts")
            self._broken = True
            self._tell(BuildFailed("error", f"the working tree does not build; {keep}:\n"
                                            f"{failure(exc)}"))
            return None
        if self._broken:
            self._broken = False
            count = sum(len(b["prompts"]) for b in bundles)
            self._say("info", f"the working tree builds again; serving {count} prompt"
                              f"{'s' if count != 1 else ''}")
        return bundles

    # -- following saves ----------------------------------------------------------------

    def _follow(self, on_change: Callable[[list[Bundle]], object]) -> None:
        try:
            self._loop(on_change)
        except Exception:  # the watcher must say why it died; serving goes on
            import traceback

            self._say("error", "internal error in the working-tree watcher; edits are no "
                               "longer followed:\n" + traceback.format_exc())

    def _loop(self, on_change: Callable[[list[Bundle]], object]) -> None:
        saves = Saves(self._dirs, self._stop)
        for batch in saves.batches():
            if not self.ready.is_set():  # the first yield: the OS watch is in place
                before, self._stamp = self._stamp, None
                missed = changed_since(before, self._dirs) if before is not None else set()
                self.ready.set()
                self._log("watching " + ", ".join(str(r) for r in self._dirs) + " for changes"
                          + (f" ({len(missed)} saved since the start: reloading)"
                             if missed else ""))
                if missed:
                    batch = batch | {Path(p) for p in missed}
            if not batch or self._stop.is_set():
                continue
            bundles = self._try_build()
            if bundles is not None:
                on_change(bundles)
                self._settle()  # the last set's cycles collected, this one frozen


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
