"""Following a working tree's saves: what counts as one, and the OS watch that sees them.

Shared by everything that reacts to an author's saves - ``serve --worktree`` (which
rebuilds what it serves), ``promptops test --watch`` and ``promptops lint --watch`` (which
re-run) - so all three agree on which files matter and none of them imports another
layer's module: lint, testing and serve sit side by side above the pipeline.

Why it is built this way:

* **watchfiles** (Rust ``notify``: inotify, FSEvents, ReadDirectoryChangesW) rather than a
  stat loop: a package of 5,000 files would cost a stat of every file every tick, and the
  OS already knows what changed. It coalesces: a batch is yielded once no new change
  arrived for ``STEP_MS`` (at the latest after ``DEBOUNCE_MS`` of continuous changes), so
  "save all", a formatter run or a ``git checkout`` of thousands of files is one batch.
  ``import watchfiles`` happens on first use, never on a cold path.
* **The filter** drops what cannot change a package: git's and our own folders (``.git``,
  ``.promptops``, ``dist``), and editor droppings that watchfiles' default filter misses
  (JetBrains writes ``x.prompt.yaml___jb_tmp___``, vim probes with a file named ``4913``).
* **No save is lost between a load and the watch** (issue 24): the OS watch is in place
  only some time after the process read the tree (0.1-0.7 s idle: the import, the watch
  set-up, the first tick; seconds under load). :func:`stamp` records every relevant
  file's stat *before* the load reads it, and the watcher's owner compares it with a
  fresh one once the watch is in place (:meth:`Saves.batches` yields an empty batch then):
  a save in between differs. A file changed within :data:`RACY_NS` of the stamp is
  recorded by content as well (git's "racily clean" rule): file times are as coarse as
  the kernel's tick, so a same-size rewrite in the tick of the stamp keeps its stat.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

STEP_MS = 150  # quiet time that ends a batch: longer than the gaps inside one save
DEBOUNCE_MS = 1600  # the longest a continuous stream of changes is held back
RACY_NS = 2_000_000_000  # a file changed this close to its stamp is compared by content

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
  | ^sed[A-Za-z0-9]{6}$         # `sed -i`'s temporary file
  | ^\.DS_Store$ | ^Thumbs\.db$
)""", re.X)

# path -> (size, mtime, ctime, inode, content digest of a racy file or None)
Stamp = dict[str, tuple[int, int, int, int, bytes | None]]


def relevant(root: Path, path: str) -> bool:
    """Can a change to ``path`` change the package at ``root``?"""
    try:
        rel = Path(os.path.normpath(path)).relative_to(root)
    except ValueError:
        return False
    if any(part in IGNORED_DIRS for part in rel.parts):
        return False
    return not IGNORED_NAMES.search(rel.name)


def stamp(roots: Iterable[Path]) -> Stamp:
    """Every relevant file under ``roots`` by stat (and racy ones by content): two stamps
    differ when a file was saved, added, removed or renamed between them."""
    now = time.time_ns()
    out: Stamp = {}
    for root in roots:
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d not in IGNORED_DIRS)
            for name in files:
                if IGNORED_NAMES.search(name):
                    continue
                path = os.path.join(folder, name)
                try:
                    st = os.stat(path)
                except OSError:  # gone since listed, or a dangling link: not a file now
                    continue
                digest = None
                if now - max(st.st_mtime_ns, st.st_ctime_ns) < RACY_NS:
                    digest = _digest(path)
                out[path] = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, digest)
    return out


def _digest(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return hashlib.file_digest(f, "blake2b").digest()
    except OSError:
        return None


def changed_since(before: Stamp, roots: Iterable[Path]) -> set[str]:
    """The paths whose stamp differs from ``before`` now (added, removed or saved)."""
    after = stamp(roots)
    out = set(before.keys() ^ after.keys())
    for path, old in before.items():
        new = after.get(path)
        if new is None or new == old:
            continue
        racy = old[4] is not None  # then compared by content even when its stat is equal
        if new[:4] != old[:4] or (racy and (new[4] or _digest(path)) != old[4]):
            out.add(path)
    return out


class Saves:
    """The OS watch over ``roots``: batches of relevant changed paths, until ``stop``.

    :meth:`batches` yields an empty set once the watch is in place (and whenever
    ``rust_timeout_ms`` passes without a change: the loop wakes to see ``stop``), so its
    owner knows when to compare against a :func:`stamp`. ``ready`` is set then too.
    """

    def __init__(self, roots: Iterable[Path], stop: threading.Event | None = None) -> None:
        self.roots = [Path(r).resolve() for r in roots]
        self.stop = stop if stop is not None else threading.Event()
        self.ready = threading.Event()

    def batches(self, *, rust_timeout_ms: int = 500,
                raise_interrupt: bool = False) -> Iterator[set[Path]]:
        import watchfiles  # deferred: only a watching command pays for it

        roots = self.roots

        def keep(_change: object, path: str) -> bool:
            return any(relevant(root, path) for root in roots)

        for batch in watchfiles.watch(*roots, watch_filter=keep, debounce=DEBOUNCE_MS,
                                      step=STEP_MS, stop_event=self.stop,
                                      rust_timeout=rust_timeout_ms, yield_on_timeout=True,
                                      raise_interrupt=raise_interrupt):
            if self.stop.is_set():
                return
            self.ready.set()
            yield {Path(path) for _change, path in batch}
