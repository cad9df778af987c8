"""Where package files come from: the working tree or a git commit.

Both sources answer the same two questions (which files exist below the package root,
and what bytes a file holds) so everything downstream is blind to where it reads from.
A commit is read from git objects only, never by checking it out, so ``--ref`` sees
exactly what the commit holds whatever state the working tree is in.

Both also enforce what a package path may name (SECURITY.md, "What a package may
read and write"), because every reader comes through them: nothing below a folder or
file named ``.git`` in any case (git's own files: on CI the checkout token sits in
``.git/config``; worktrees and submodules have a ``.git`` *file*), and a symlink only
while its target stays inside the package and outside ``.git``. A refused path is
:class:`Refused`, a ``FileNotFoundError`` (absent for any reader that only asks
"is it there?") that says why, so the loader's message names the rule.
"""

from __future__ import annotations

import os
import posixpath
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Protocol

from promptops.errors import GitError, PackageAbsent, UsageError
from promptops.git import Repo
from promptops.git.history import git_read
from promptops.git.objects import BATCH_LIMIT, Entry, list_tree, read_batch, read_blob
from promptops.git.objects import blob_id as blob_id  # re-exported: lint keys files by it

MANIFEST = "promptops.yaml"
_SKIP_DIRS = frozenset({"__pycache__", "node_modules", ".venv"})
_MAX_LINKS = 8  # symlinks followed for one path, as the loop bound
_SYMLINK = 0o120000
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # a FIFO must not block the open


@dataclass(frozen=True)
class Origin:
    """Provenance recorded in a bundle: reproducible, so no absolute paths."""

    commit: str | None
    tree: str | None
    dirty: bool
    path: str  # package folder relative to the repository root, "." for the root


class Source(Protocol):
    """Where a package's files come from: what every stage after this one reads."""

    origin: Origin
    label: str

    def files(self) -> list[str]:
        """Package-relative POSIX paths of every file below the package root, sorted."""

    def read(self, path: str) -> bytes:
        """The bytes of one package-relative file; FileNotFoundError when absent."""

    def blob_id(self, path: str) -> str | None:
        """The git id of a file's content when it is known before reading it, else None
        (the per-file memo and lint's cache key on it)."""

    def read_ahead(self, paths: list[str]) -> None:
        """A hint: these files will be read (a source that reads in batches does it now)."""


def find_package(start: Path) -> Path:
    """The nearest folder at or above ``start`` that holds ``promptops.yaml``."""
    start = start.resolve()
    for folder in (start, *start.parents):
        if (folder / MANIFEST).is_file():
            return folder
    from promptops.fsutil import not_a_package_hint

    hint = not_a_package_hint(start, MANIFEST)
    raise UsageError(
        f"no {MANIFEST} found in {start} or any folder above it{hint}; "
        "pass a package path or create one with `promptops init`"
    )


class Refused(FileNotFoundError):
    """A path the package rules forbid reading: absent for every reader, but the loader
    says why, since "not found" about a file the author can see sends them hunting.
    ``why`` completes a sentence about the path: ``template 'x' is <why>``."""

    why = "refused"

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.path = path


class OutsidePackage(Refused):
    """A symlink whose target leaves the package."""

    why = "a symlink pointing outside the package; only files inside it are read"


class GitPath(Refused):
    """A path inside a ``.git`` folder or file (any case, any depth)."""

    why = ("inside a .git folder; git's own files (which can hold credentials) are never "
           "read as package content")


class GitLink(Refused):
    """A symlink whose target is inside a ``.git`` folder."""

    why = ("a symlink into a .git folder; git's own files (which can hold credentials) are "
           "never read as package content")


class SymlinkLoop(Refused):
    """A symlink that never reaches a file (a loop, or more links than :data:`_MAX_LINKS`)."""

    why = f"a symlink loop (more than {_MAX_LINKS} links followed)"


REFUSED = (OutsidePackage, GitPath, GitLink, SymlinkLoop)


def _readable(path: str) -> str:
    """``path`` normalised, or the refusal both sources give: outside the package is not
    found, a name inside ``.git`` is GitPath."""
    norm = inside(path)
    if norm is None:
        raise FileNotFoundError(path)
    if names_git(norm):
        raise GitPath(path)
    return norm


def names_git(path: str) -> bool:
    """Whether any component of a package-relative POSIX path is ``.git`` in any case."""
    return ".git" in path.lower() and any(part.lower() == ".git" for part in path.split("/"))


def inside(path: str) -> str | None:
    """A package-relative path normalised, None when it escapes. Kept by path (7% of a
    build), short paths only: the cache never holds more than 4,096 of 1 KB."""
    return _inside(path) if len(path) <= 1024 else _inside.__wrapped__(path)


@lru_cache(maxsize=4096)
def _inside(path: str) -> str | None:
    if not path or "\\" in path or path.startswith("/") or "\x00" in path:
        return None
    norm = posixpath.normpath(path)
    if norm == ".." or norm.startswith("../") or norm == ".":
        return None
    return norm


class WorktreeSource:
    """The package as it is on disk, uncommitted edits included."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.label = str(root)
        self.origin = _worktree_origin(self.root)

    def blob_id(self, path: str) -> str | None:
        return None  # known only once read: the memo keys on the id of the bytes then

    def read_ahead(self, paths: list[str]) -> None:
        pass  # files are read one by one, as asked

    def files(self) -> list[str]:
        found: list[str] = []
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames[:] = sorted(d for d in dirnames
                                 if d not in _SKIP_DIRS and d.lower() != ".git")
            rel = Path(dirpath).relative_to(self.root).as_posix()
            for name in filenames:
                if name.lower() != ".git":  # the gitlink file of a worktree or submodule
                    found.append(name if rel == "." else f"{rel}/{name}")
        return sorted(found)

    def read(self, path: str) -> bytes:
        norm = _readable(path)
        full = self.root / norm
        try:
            real = full.resolve()
        except (RuntimeError, OSError) as exc:  # a symlink loop (RuntimeError on 3.11/3.12)
            raise SymlinkLoop(path) from exc
        # A symlink may point anywhere; only what stays inside the package is readable.
        if not real.is_relative_to(self.root):
            raise (OutsidePackage if os.path.lexists(full) else FileNotFoundError)(path)
        if real != full and names_git(real.relative_to(self.root).as_posix()):
            raise GitLink(path)
        return _read_regular(real, path)


class CachingSource:
    """A source that remembers what it read, so hashing (lint's cache key) and validating
    read each file once; and the blob id of what it read once hashed (:meth:`content_id`),
    so neither hashes a file again."""

    def __init__(self, inner: Source) -> None:
        self.inner = inner
        self.origin = inner.origin
        self.label = inner.label
        self._files: list[str] | None = None
        self._data: dict[str, bytes] = {}
        self._ids: dict[str, str] = {}

    def files(self) -> list[str]:
        if self._files is None:
            self._files = self.inner.files()
        return self._files

    def prefetch(self) -> None:
        """Read a working tree's plain files directly: ``WorktreeSource.read`` resolves
        every path (a symlink may leave the package), dearer than the read on 10,000
        files; the walk's files are normalised and inside the root, and it follows no
        symlinked folder, so only files that are symlinks are left to the inner source."""
        if not isinstance(self.inner, WorktreeSource):
            return
        from promptops.fsutil import plain_bytes  # (one open, fstat and read a file)

        root = self.inner.root
        for path in self.files():
            if path in self._data:
                continue
            try:  # symlinks, and a FIFO whose open would block, are the inner source's
                data = plain_bytes(os.path.join(root, path))
            except OSError:
                continue
            if data is not None:
                self._data[path] = data

    def read(self, path: str) -> bytes:
        if path not in self._data:
            self._data[path] = self.inner.read(path)
        return self._data[path]

    def blob_id(self, path: str) -> str | None:
        """The inner source's answer, or the id of the bytes this source holds once
        :meth:`content_id` hashed them: those bytes are what it reads from then on."""
        known = self._ids.get(path)
        return known if known is not None else self.inner.blob_id(path)

    def content_id(self, path: str) -> str:
        """The blob id of ``path``'s bytes as this source reads them, hashed once (lint's
        cache key, then each half's memo keys and the whole run's: three passes over
        speed2's 183 MB, issue 26 session 15). FileNotFoundError as :meth:`read` raises it."""
        known = self._ids.get(path)
        if known is None:
            known = self._ids[path] = blob_id(self.read(path))
        return known

    def remember_id(self, path: str, sha: str) -> None:
        """``sha``, the blob id a forked child hashed from the bytes it inherited from
        this source (its memo keys, :func:`promptops.pipeline.prefetch.received`), kept as
        :meth:`content_id` would keep it; only for bytes this source held before the
        fork, so they are the very bytes hashed (a file read after it may differ)."""
        if path in self._data:
            self._ids.setdefault(path, sha)

    def read_ahead(self, paths: list[str]) -> None:
        self.inner.read_ahead([p for p in paths if p not in self._data])

    def held(self, path: str) -> bool:
        """Reading ``path`` needs no git process: its bytes are in memory, or the files
        are a folder's or in memory (a forked child, :mod:`promptops.pipeline.prefetch`,
        must not talk to its parent's git processes)."""
        inner = self.inner
        return (path in self._data or isinstance(inner, WorktreeSource | MemorySource)
                or (isinstance(inner, GitSource) and path in inner._data))


class MemorySource:
    """A package held in memory: rule cases and tests lint and build it without a disk."""

    def __init__(self, files: Mapping[str, bytes | str], *, label: str = "memory") -> None:
        self._files = {p: d.encode("utf-8") if isinstance(d, str) else d
                       for p, d in files.items()}
        self.label = label
        self.origin = Origin(commit=None, tree=None, dirty=True, path=".")

    def files(self) -> list[str]:
        return sorted(self._files)

    def read(self, path: str) -> bytes:
        norm = inside(path)
        if norm is None or norm not in self._files:
            raise FileNotFoundError(path)
        if names_git(norm):
            raise GitPath(path)
        return self._files[norm]

    def blob_id(self, path: str) -> str | None:
        data = self._files.get(path)
        return blob_id(data) if data is not None else None

    def read_ahead(self, paths: list[str]) -> None:
        pass


def _read_regular(real: Path, path: str) -> bytes:
    """The bytes of a regular file, opened without following a final symlink.

    ``real`` is already resolved, so a symlink there now was swapped in since: refused
    rather than followed. Non-blocking, so a FIFO cannot hang the reader; anything
    that is not a regular file (a FIFO, a device, a folder) is absent.
    """
    try:
        fd = os.open(real, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise FileNotFoundError(path) from exc
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise FileNotFoundError(path)
    with open(fd, "rb") as fh:
        return fh.read()


def _worktree_origin(root: Path) -> Origin:
    try:
        repo = Repo.find(root)
    except GitError:  # a .git file git cannot read either: the folder stands alone
        repo = None
    return Origin(commit=None, tree=None, dirty=True, path=repo.prefix if repo else ".")


class GitSource:
    """The package exactly as one commit holds it, read from git objects."""

    def __init__(self, package_dir: Path, rev: str = "HEAD") -> None:
        from promptops.git.history import History

        package_dir = package_dir.resolve()
        self.history = History.open(package_dir, "build, serve and --ref read commits: "
                                    "`git init` and commit the package, or read the working "
                                    "tree (no --ref; `promptops build --worktree`)")
        top = self.history.top
        self.prefix = package_dir.relative_to(top).as_posix()
        at = self.history.tree_at(rev, self.prefix)
        self.label = at.label
        if at.tree is None:
            cwd = Path.cwd().resolve()
            here = os.path.relpath(package_dir, cwd) if top in (cwd, *cwd.parents) else None
            git_ = "git" if here else f"git -C {top}"
            hint = (f": it is not committed yet; commit it ({git_} add -- {here or self.prefix}"
                    f" && {git_} commit -m 'Add {self.prefix}'); `promptops build --worktree` "
                    "builds uncommitted files" if at.at_head else "")
            raise PackageAbsent(f"{self.prefix} does not exist at {self.label}{hint}")
        self.tree = at.tree
        self.origin = Origin(commit=at.commit, tree=at.tree, dirty=False, path=self.prefix)
        self._entries: dict[str, Entry] | None = None
        self._links: tuple[dict[str, Entry], bool] | None = None  # listing, holds a symlink
        self._data: dict[str, bytes] = {}
        self._read_rest = False  # every small blob not read yet was read in one batch

    def _index(self) -> dict[str, Entry]:
        if self._entries is None:
            listed = git_read(f"the files of {self.label}",
                              lambda: list_tree(self.history.git, self.tree))
            # only a hand-made tree holds a .git path; it is never content
            self._entries = {p: e for p, e in listed.items() if not names_git(p)}
        return self._entries

    def entries(self) -> dict[str, Entry]:
        """Every file of the tree by path (not to be changed: a copy is the caller's)."""
        return self._index()

    def know(self, entries: dict[str, Entry]) -> None:
        """The files of this tree, when the caller knows them already (serve's incremental
        rebuild patches the last tree's listing with a ``diff-tree``): no ``ls-tree``.
        Like the listing, it holds no path :func:`names_git` refuses. Such a caller reads
        a few files: each is read when asked, not every blob at the first read."""
        self._entries = entries
        self._read_rest = True

    def seed(self, path: str, data: bytes) -> None:
        """The bytes of ``path``, already read by the caller (they must be its blob's)."""
        self._data[path] = data

    def blob_ids(self) -> dict[str, str] | None:
        """path -> blob id of every file (lint's cache key), None when a symlink is held."""
        entries = self._index()
        return None if self._linked(entries) else {p: e.sha for p, e in entries.items()}

    def _linked(self, entries: dict[str, Entry]) -> bool:
        """Whether the listing holds a symlink (once a listing: 20,000 blob ids a review)."""
        if self._links is None or self._links[0] is not entries:
            self._links = (entries, any(e.mode == _SYMLINK for e in entries.values()))
        return self._links[1]

    def blob_id(self, path: str) -> str | None:
        """The git object id of a file: its content's name, known before reading it. None
        through a symlink: the tree names the link's text, not the bytes read gives (the
        target's), and a memo keyed on it would keep a changed target's old content."""
        entries = self._index()
        entry = entries.get(path)
        if entry is None or (self._linked(entries) and _first_link(path, entries)[0] is not None):
            return None
        return entry.sha

    def read_ahead(self, paths: list[str]) -> None:
        """Read these files' small blobs now, through one `git cat-file --batch` call.

        A reader that knows which files it will need (the package loader, which skips
        files whose blob it has seen before) names them; the first read of a file nobody
        named reads every small blob not read yet, in one more batch, so a later reader of
        the whole package (lint hashing every file) never costs a git process per file
        (:mod:`promptops.git.objects` says why).
        """
        entries = self._index()
        chosen = {p: entries[p] for p in paths if p in entries and p not in self._data}
        blobs = read_batch(self.history.git_dir,
                           {e.sha for e in chosen.values() if e.size <= BATCH_LIMIT})
        for path, entry in chosen.items():
            if entry.sha in blobs:
                self._data[path] = blobs[entry.sha]

    def files(self) -> list[str]:
        return sorted(self._index())

    def read(self, path: str) -> bytes:
        norm = _readable(path)
        entries = self._index()
        # Symlinks are resolved component by component, as the file system would: a link
        # may be the file itself or any folder on the way to it.
        for _ in range(_MAX_LINKS + 1):
            link, rest = _first_link(norm, entries)
            if link is None:
                break
            raw = self._blob(link, entries[link].sha)
            target = raw.decode("utf-8", "surrogateescape")  # link targets are bytes
            joined = posixpath.join(posixpath.dirname(link), target)
            following = inside(f"{joined}/{rest}" if rest else joined)
            if following is None:
                raise OutsidePackage(path)
            if names_git(following):
                raise GitLink(path)
            norm = following
        else:
            raise SymlinkLoop(path)
        entry = entries.get(norm)
        if entry is None:
            raise FileNotFoundError(path)
        return self._blob(norm, entry.sha)

    def _blob(self, path: str, sha: str) -> bytes:
        data = self._data.get(path)
        if data is None and not self._read_rest:
            self._read_rest = True
            self.read_ahead([p for p in self._index() if p not in self._data])
            data = self._data.get(path)
        return data if data is not None else read_blob(self.history.git, path, sha)


def _first_link(norm: str, entries: dict[str, Entry]) -> tuple[str | None, str]:
    """The first leading component of ``norm`` that is a symlink, and what follows it."""
    start = 0
    while True:
        cut = norm.find("/", start)
        prefix = norm if cut < 0 else norm[:cut]
        entry = entries.get(prefix)
        if entry is not None and entry.mode == _SYMLINK:
            return prefix, "" if cut < 0 else norm[cut + 1:]
        if cut < 0:
            return None, ""
        start = cut + 1


def cache_dir(package_dir: Path, kind: str) -> Path:
    """Where a cache of ``kind`` (``lint``) for the package at ``package_dir`` lives:
    ``<common git dir>/promptops/<kind>`` (every worktree of a repository shares it), or
    the user cache outside a repository. Lint reads no git itself; it asks here."""
    try:
        repo = Repo.find(package_dir)
    except GitError:  # a .git file git cannot read either: cache like a lone folder
        repo = None
    if repo is not None:
        return repo.common_dir / "promptops" / kind
    from promptops.fsutil import user_cache_dir

    return user_cache_dir() / kind


def open_source(package_dir: Path, ref: str | None) -> Source:
    """The working tree when ``ref`` is None, otherwise the commit it names."""
    if ref is None:
        return WorktreeSource(package_dir)
    return GitSource(package_dir, ref)


def head_is_dirty(package_dir: Path) -> bool:
    """Whether the package folder has uncommitted changes (build warns about them)."""
    src = GitSource(package_dir)
    return src.history.is_dirty(src.prefix)
