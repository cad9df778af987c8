"""The build cache of ``promptops serve``: a restart on a built commit costs no build.

A bundle depends only on the files below the package folder, that is on the folder's
git *tree* id, so bundles are stored by tree id: a new commit that leaves the package
alone (a README edit, a merge of unrelated work) reuses the bundle already built. A
small index maps commit -> package path -> tree id, so a commit seen before needs no
git call at all. Layout, below ``<common git dir>/promptops/<generation>/``::

    trees/<tree id>.bundle.json   the bundle as first built (canonical JSON, verified on load)
    commits/<commit id>.json      {"<package path>": "<tree id>", ...}

A bundle records the commit it was built from (``source.commit``), so a bundle reused
for another commit is *re-stamped*: ``source.commit``/``source.path`` set to the served
commit and the digest recomputed. Everything else in it is a function of the tree.

When the git dir is not writable the user cache dir (``$XDG_CACHE_HOME`` or
``~/.cache``)/promptops/<hash of the git dir>/ is used instead. Only the standard
library is imported here: loading a cached bundle is on the cold path.

**Bounded.** Every commit serve follows stores a bundle (68 MB at 100,000 prompts), so
:meth:`BuildCache.prune` runs after each store: the newest bundles are kept (a load
refreshes an entry's mtime, so "newest" is "last used") while they fit in
:data:`MAX_BUNDLES` entries and :data:`MAX_BYTES`; the older ones are unlinked, and so are
all but the newest :data:`MAX_COMMITS` commit indexes. The trees a process serves are
never pruned by it (its next rebuild cuts the encodings from their files). Each unlink is
atomic and a reader of an entry another process just pruned misses it, as it would miss
any entry: it builds again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Callable, Collection
from pathlib import Path
from typing import TYPE_CHECKING

from promptops import __version__
from promptops.errors import BundleError
from promptops.pipeline.bundle import FORMAT, canonical, parse_bundle, serialise

if TYPE_CHECKING:
    from promptops.pipeline.bundle_types import Bundle

# A new promptops version may compile the same tree differently: never reuse across them.
GENERATION = "v1-" + hashlib.sha256(f"{FORMAT} {__version__}".encode()).hexdigest()[:12]
SUFFIX = ".bundle.json"
# What prune keeps at most (the bundles this process serves aside): the last 64 bundles
# used, as long as they take at most 1 GiB (15 of 100,000 prompts, 1,500 of 1,000), and
# the last 4,096 commits' indexes (~100 bytes each; a pruned one costs one `git rev-parse`)
MAX_BUNDLES = 64
MAX_BYTES = 1 << 30
MAX_COMMITS = 4096


def user_cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "promptops"


def cache_dirs(common_dir: Path) -> list[Path]:
    """Where the cache of a repository may live, preferred first."""
    key = hashlib.sha256(str(common_dir.resolve()).encode()).hexdigest()[:16]
    return [common_dir / "promptops" / GENERATION, user_cache_root() / key / GENERATION]


class BuildCache:
    """A repository's bundles by tree id: read from any location, write to the first that works."""

    def __init__(self, common_dir: Path, log: Callable[[str], None]) -> None:
        self.dirs = cache_dirs(common_dir)
        self.log = log
        self._writable: list[Path] = list(self.dirs)
        self._stamps: dict[str, Stamp] = {}  # by tree: what restamped() keeps (prune() drops)

    def tree_for(self, commit: str, prefix: str) -> str | None:
        """The package's tree id at ``commit`` if an earlier run recorded it."""
        tree = self._index(commit).get(prefix)
        return tree if isinstance(tree, str) else None

    def _index(self, commit: str) -> dict[str, object]:
        for folder in self.dirs:
            try:
                data = json.loads((folder / "commits" / f"{commit}.json").read_bytes())
            except (OSError, ValueError):
                continue
            if isinstance(data, dict):
                return data
        return {}

    def load(self, tree: str) -> Bundle | None:
        """The verified bundle built from ``tree``, or None (a damaged entry is reported)."""
        for folder in self.dirs:
            path = folder / "trees" / f"{tree}{SUFFIX}"
            try:
                data = path.read_bytes()
            except OSError:
                continue
            try:
                bundle = parse_bundle(data, str(path))
            except BundleError as exc:
                self.log(f"ignoring a damaged cache entry, rebuilding: {exc}")
                continue
            if bundle["source"].get("tree") == tree:
                _touch(path)  # used now: the last to be pruned
                return bundle
            self.log(f"ignoring cache entry {path}: it holds another tree")
        return None

    def file(self, tree: str) -> Path | None:
        """Where the bundle of ``tree`` is stored, if it is (its canonical JSON: serve's
        incremental rebuild cuts each prompt's encoding from it)."""
        for folder in self.dirs:
            path = folder / "trees" / f"{tree}{SUFFIX}"
            if path.is_file():
                return path
        return None

    def remember(self, commit: str, prefix: str, tree: str) -> None:
        self.remember_all(commit, {prefix: tree})

    def remember_all(self, commit: str, trees: dict[str, str]) -> None:
        """Record each package folder's tree at ``commit`` (one read and one write of the
        commit's index for every package of a repository: serve's follower records a
        commit of 100 packages at once, not one rewrite of a growing index per package)."""
        index = self._index(commit)
        if any(index.get(prefix) != tree for prefix, tree in trees.items()):
            self._write(f"commits/{commit}.json", json.dumps({**index, **trees}).encode())

    def restamped(self, tree: str, bundle: Bundle, commit: str, path: str) -> Bundle:
        """``restamp(bundle, commit, path)`` for the bundle of ``tree`` this process serves,
        in the time of hashing its members after ``source``: a commit that leaves a package
        as it was restamps it (100 packages of 1,000 prompts: 13 ms each to encode again)."""
        return self.stamp(tree, bundle)(commit, path)

    def stamp(self, tree: str, bundle: Bundle) -> Stamp:
        """The :class:`Stamp` of the bundle of ``tree`` this process serves, made on first
        need (serve's warm-up makes it ahead of the first commit)."""
        stamp = self._stamps.get(tree)
        if stamp is None or stamp.bundle is not bundle:
            stamp = self._stamps[tree] = Stamp(bundle)
        return stamp

    def store(self, commit: str, prefix: str, bundle: Bundle, data: bytes | None = None) -> None:
        """Keep ``bundle`` (``data``: its ``serialise``, when the caller has it already)."""
        tree = bundle["source"].get("tree")
        if not isinstance(tree, str):
            return
        self._write(f"trees/{tree}{SUFFIX}", serialise(bundle) if data is None else data)
        self.remember(commit, prefix, tree)

    def prune(self, keep: Collection[str] = ()) -> int:
        """Unlink the bundles least recently used beyond :data:`MAX_BUNDLES` entries or
        :data:`MAX_BYTES` in all, never one of the trees in ``keep`` (what this process
        serves: they count towards the bounds, first), and the commit indexes beyond the
        newest :data:`MAX_COMMITS`; in the folder this cache writes to. Returns how many
        files went. Concurrent prunes and stores are safe: an unlink is atomic, a file
        another process removed first is skipped, and a store lands with the newest mtime."""
        self._stamps = {tree: s for tree, s in self._stamps.items() if tree in keep}
        if not self._writable:
            return 0
        folder = self._writable[0]
        max_bundles, max_bytes, max_commits = MAX_BUNDLES, MAX_BYTES, MAX_COMMITS
        trees = _listing(folder / "trees", SUFFIX)
        kept = [e for e in trees if e[1] in keep]
        count, size = len(kept), sum(e[2] for e in kept)
        doomed: list[Path] = []
        for _, tree, nbytes, path in trees:
            if tree in keep:
                continue
            if doomed or count + 1 > max_bundles or size + nbytes > max_bytes:
                doomed.append(path)  # and every older one: the newest that fit stay
                continue
            count, size = count + 1, size + nbytes
        commits = _listing(folder / "commits", ".json")
        doomed += [path for _, _, _, path in commits[max_commits:]]
        gone = 0
        for path in doomed:
            try:
                path.unlink()
                gone += 1
            except OSError:  # pruned by another process, or not ours to prune
                continue
        return gone

    def _write(self, rel: str, data: bytes) -> None:
        from promptops.fsutil import atomic_write  # a start from the cache writes nothing

        while self._writable:
            try:
                atomic_write(self._writable[0] / rel, data)
                return
            except OSError as exc:
                dropped = self._writable.pop(0)
                self.log(f"cannot write the build cache in {dropped}: {exc}")
        # No writable location: serving still works, restarts just rebuild.


def _listing(folder: Path, suffix: str) -> list[tuple[int, str, int, Path]]:
    """(mtime, key, bytes, path) of the entries ``*suffix`` of ``folder``, newest first
    (temp files, ``.<name>.<pid>.tmp``, are the writer's to sweep)."""
    out: list[tuple[int, str, int, Path]] = []
    try:
        with os.scandir(folder) as it:
            for entry in it:
                if entry.name.startswith(".") or not entry.name.endswith(suffix):
                    continue
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                out.append((st.st_mtime_ns, entry.name[: -len(suffix)], st.st_size,
                            Path(entry.path)))
    except OSError:
        return []
    out.sort(key=lambda e: (e[0], e[1]), reverse=True)
    return out


def _touch(path: Path) -> None:
    """``path``'s mtime set to now (what prune orders by); a read-only cache stays as is."""
    with contextlib.suppress(OSError):
        os.utime(path)


def restamp(bundle: Bundle, commit: str, path: str) -> Bundle:
    """The cached bundle as if built from ``commit``: same content, new provenance and digest
    (:class:`Stamp` once; a served bundle restamped at every commit keeps its Stamp:
    :meth:`BuildCache.restamped`). A bundle served at the commit it was built from is
    returned as it is, before any Stamp: serve's start from the cache on that commit
    (every restart on a commit it built) encoded each bundle for nothing (100,000 prompts:
    the whole bundle's JSON, ~1 s)."""
    source = bundle["source"]
    if source.get("commit") == commit and source.get("path") == path:
        return bundle
    return Stamp(bundle)(commit, path)


class Stamp:
    """:func:`restamp` of one bundle by its canonical parts: the digest's hash up to the
    ``source`` member is kept, so a new commit costs the hash of ``source`` and of the
    members after it (``templates``), not the bundle's JSON again. Sorted keys make
    ``canonical(bundle)`` the members' canonical forms in order, which is what the test
    holds it to (tests/serve/test_cache_restamp.py)."""

    __slots__ = ("_head", "_tail", "bundle")

    def __init__(self, bundle: Bundle) -> None:
        self.bundle = bundle
        body = {k: v for k, v in bundle.items() if k != "digest"}
        keys = sorted(body)
        cut = keys.index("source")
        members = [canonical(k) + b":" + canonical(body[k]) for k in keys]
        self._head = hashlib.sha256(
            b"{" + b"".join(m + b"," for m in members[:cut]) + canonical("source") + b":")
        self._tail = b"".join(b"," + m for m in members[cut + 1:]) + b"}"

    def __call__(self, commit: str, path: str) -> Bundle:
        source = self.bundle["source"]
        if source.get("commit") == commit and source.get("path") == path:
            return self.bundle
        out: Bundle = {**self.bundle, "source": {**source, "commit": commit, "path": path}}
        h = self._head.copy()
        h.update(canonical(out["source"]))
        h.update(self._tail)
        out["digest"] = "sha256:" + h.hexdigest()
        return out
