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
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from promptops.errors import GitError, UsageError

T = TypeVar("T")
MANIFEST = "promptops.yaml"
_BATCH_LIMIT = 1 << 20  # blobs up to 1 MiB are read together, larger ones one by one
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
    origin: Origin
    label: str

    def files(self) -> list[str]:
        """Package-relative POSIX paths of every file below the package root, sorted."""

    def read(self, path: str) -> bytes:
        """The bytes of one package-relative file; FileNotFoundError when absent."""


def find_package(start: Path) -> Path:
    """The nearest folder at or above ``start`` that holds ``promptops.yaml``."""
    start = start.resolve()
    for folder in (start, *start.parents):
        if (folder / MANIFEST).is_file():
            return folder
    raise UsageError(
        f"no {MANIFEST} found in {start} or any folder above it; "
        "pass a package path or create one with `promptops init`"
    )


class Refused(FileNotFoundError):
    """A path the package rules forbid reading: absent for every reader, but the loader
    says why, since "not found" about a file the author can see sends them hunting.

    ``why`` completes a sentence about the path: ``template 'x' is <why>``.
    """

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


def names_git(path: str) -> bool:
    """Whether any component of a package-relative POSIX path is ``.git`` in any case."""
    return ".git" in path.lower() and any(part.lower() == ".git" for part in path.split("/"))


def inside(path: str) -> str | None:
    """Normalise a package-relative path; None when it escapes the package."""
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
        norm = inside(path)
        if norm is None:
            raise FileNotFoundError(path)
        if names_git(norm):
            raise GitPath(path)
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
    top = _repo_top(root)
    rel = root.relative_to(top).as_posix() if top else "."
    return Origin(commit=None, tree=None, dirty=True, path=rel)


def _repo_top(folder: Path) -> Path | None:
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


DAMAGED = "the repository is damaged or a partial clone; `git fsck` lists what is wrong"


def git_read(what: str, read: Callable[[], T]) -> T:
    """``read()``, with any failure of git or GitPython turned into a GitError (exit 2).

    A missing or corrupt object surfaces as whatever the layer that met it raises
    (GitCommandError, gitdb's BadObject, ValueError, ...); the user needs to hear what
    could not be read and git's own words for why, not a traceback.
    """
    try:
        return read()
    except GitError:
        raise
    except Exception as exc:
        if not from_git(exc):
            raise
        raise GitError(f"cannot read {what} from git: {git_words(exc)} ({DAMAGED})") from exc


def from_git(exc: BaseException) -> bool:
    """Whether ``exc`` was raised by GitPython or gitdb (a repository that cannot be read)."""
    if any(type(exc).__module__.startswith(m) for m in ("git.", "gitdb")):
        return True
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    module = tb.tb_frame.f_globals.get("__name__", "") if tb is not None else ""
    return module == "git" or module.startswith(("git.", "gitdb"))


def git_words(exc: BaseException) -> str:
    """git's own first ``fatal:``/``error:`` line for a failure, else the exception's text."""
    stderr = getattr(exc, "stderr", None)
    text = stderr if isinstance(stderr, str) else str(exc)
    for line in text.splitlines():
        for tag in ("fatal:", "error:"):
            if tag in line:
                return line.split(tag, 1)[1].strip(" '")
    first = str(exc).strip().splitlines()
    return first[0] if first else type(exc).__name__


def unresolved(repo: Any, rev: str, top: Path) -> str:
    """Why ``rev`` names no commit, in git's own words when the repository is damaged."""
    import git

    try:
        repo.git.rev_parse("--verify", "--end-of-options", f"{rev}^{{commit}}")
    except git.GitCommandError as exc:
        fatal = [ln.split("fatal:", 1)[1].strip(" '") for ln in str(exc.stderr).splitlines()
                 if "fatal:" in ln and "Needed a single revision" not in ln]
        if fatal:
            return f"cannot read revision {rev!r} in {top}: {fatal[0]}"
    if rev == "HEAD" and not git_read(f"the commits of {top}",
                                      lambda: repo.git.rev_list("-n1", "--all")):
        return (f"the repository at {top} has no commits yet: commit the package first "
                "(or build the working tree with --worktree)")
    return f"unknown revision {rev!r} in {top}"


def no_commits_yet(repo: Any) -> bool:
    """Whether HEAD has no commit because there is none yet (not because git cannot read
    the one it names: that is a GitError, exit 2, instead of "no commits yet")."""
    if repo.head.is_valid():
        return False
    top = Path(repo.working_tree_dir or repo.git_dir)
    why = unresolved(repo, "HEAD", top)
    if why.startswith("cannot read"):
        raise GitError(f"{why} ({DAMAGED})")
    return True


class GitSource:
    """The package exactly as one commit holds it, read from git objects."""

    def __init__(self, package_dir: Path, rev: str = "HEAD") -> None:
        import git  # deferred: GitPython costs ~100 ms to import

        package_dir = package_dir.resolve()
        try:
            self.repo = git.Repo(package_dir, search_parent_directories=True)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError) as exc:
            raise GitError(f"{package_dir} is not inside a git repository") from exc
        top = Path(self.repo.working_tree_dir or package_dir).resolve()
        self.prefix = package_dir.relative_to(top).as_posix()
        try:
            self.commit = self.repo.commit(rev)
        except (git.BadName, ValueError) as exc:
            raise GitError(unresolved(self.repo, rev, top)) from exc
        self.label = f"{rev} ({self.commit.hexsha[:12]})"
        # GitPython reads the commit and tree objects lazily: a missing one fails here.
        tree = git_read(f"commit {self.label}", lambda: self.commit.tree)
        sub = tree if self.prefix == "." else git_read(
            f"the tree of {self.label}", lambda: _subtree(tree, self.prefix))
        if sub is None:
            cwd = Path.cwd().resolve()
            here = os.path.relpath(package_dir, cwd) if top in (cwd, *cwd.parents) else None
            git_ = "git" if here else f"git -C {top}"
            hint = (f": it is not committed yet; commit it ({git_} add -- {here or self.prefix}"
                    f" && {git_} commit -m 'Add {self.prefix}'); `promptops build --worktree` "
                    "builds uncommitted files"
                    if self.repo.head.is_valid() and self.commit == self.repo.head.commit else "")
            raise GitError(f"{self.prefix} does not exist at {self.label}{hint}")
        self.tree = sub
        self.origin = Origin(
            commit=self.commit.hexsha, tree=self.tree.hexsha, dirty=False, path=self.prefix
        )
        self._entries: dict[str, tuple[int, str, int]] | None = None  # path -> mode, sha, size
        self._data: dict[str, bytes] = {}
        self._read_ahead = False

    def _index(self) -> dict[str, tuple[int, str, int]]:
        if self._entries is None:
            raw = git_read(
                f"the files of {self.label}", lambda: self.repo.git.ls_tree(
                    "-r", "-l", "-z", self.tree.hexsha, stdout_as_string=False))
            entries: dict[str, tuple[int, str, int]] = {}
            for record in raw.split(b"\0"):
                head, _, name = record.partition(b"\t")
                fields = head.split()
                if len(fields) != 4 or fields[1] != b"blob":
                    continue  # submodules (commit entries) are not package files
                path = name.decode("utf-8", "surrogateescape")
                if names_git(path):  # only a hand-made tree holds one; never content
                    continue
                size = int(fields[3]) if fields[3].isdigit() else 0  # "BAD": a missing blob
                entries[path] = (int(fields[0], 8), fields[2].decode(), size)
            self._entries = entries
        return self._entries

    def blob_id(self, path: str) -> str | None:
        """The git object id of a file: its content's name, known before reading it."""
        entry = self._index().get(path)
        return entry[1] if entry is not None else None

    def read_ahead(self, paths: list[str]) -> None:
        """Read these files' small blobs now, through one `git cat-file --batch` call.

        GitPython reads one object per round trip to its cat-file process; on a
        10,000-prompt package that alone costs seconds, one pipelined call does not.
        A reader that knows which files it will need (the package loader, which skips
        files whose blob it has seen before) names them; otherwise the first read
        reads every small blob ahead.
        """
        entries = self._index()
        self._read_ahead = True
        chosen = {p: entries[p] for p in paths if p in entries and p not in self._data}
        wanted = {sha for _, sha, size in chosen.values() if size <= _BATCH_LIMIT}
        if not wanted:
            return
        proc = subprocess.run(
            ["git", "cat-file", "--batch"],
            input="".join(f"{sha}\n" for sha in sorted(wanted)).encode(),
            cwd=self.repo.git_dir,
            capture_output=True,
            check=False,
        )
        out, pos, blobs = proc.stdout, 0, {}
        while pos < len(out):
            eol = out.index(b"\n", pos)
            header = out[pos:eol].split()
            if len(header) != 3:  # "<sha> missing": leave it to read(), which reports it
                pos = eol + 1
                continue
            size = int(header[2])
            blobs[header[0].decode()] = out[eol + 1 : eol + 1 + size]
            pos = eol + 1 + size + 1
        for path, (_, sha, _) in chosen.items():
            if sha in blobs:
                self._data[path] = blobs[sha]

    def files(self) -> list[str]:
        return sorted(self._index())

    def read(self, path: str) -> bytes:
        norm = inside(path)
        if norm is None:
            raise FileNotFoundError(path)
        if names_git(norm):
            raise GitPath(path)
        entries = self._index()
        # Symlinks are resolved component by component, as the file system would: a link
        # may be the file itself or any folder on the way to it.
        for _ in range(_MAX_LINKS + 1):
            link, rest = _first_link(norm, entries)
            if link is None:
                break
            raw = self._blob(link, entries[link][1])
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
        return self._blob(norm, entry[1])

    def _blob(self, path: str, sha: str) -> bytes:
        if not self._read_ahead:
            self.read_ahead(list(self._index()))
        data = self._data.get(path)
        if data is None:
            try:
                data = self.repo.git.cat_file(
                    "blob", sha, stdout_as_string=False, strip_newline_in_stdout=False
                )
            except Exception as exc:  # a missing object (shallow or broken clone)
                raise GitError(
                    f"cannot read {path} ({sha[:12]}) from git: the object is missing or "
                    "damaged (a partial or broken clone; `git fsck` lists what is wrong)"
                ) from exc
        return bytes(data)


def _subtree(tree: Any, prefix: str) -> Any:
    try:
        return tree / prefix
    except KeyError:  # no such folder in the commit (a missing object raises otherwise)
        return None


def _first_link(norm: str, entries: dict[str, tuple[int, str, int]]) -> tuple[str | None, str]:
    """The first leading component of ``norm`` that is a symlink, and what follows it."""
    start = 0
    while True:
        cut = norm.find("/", start)
        prefix = norm if cut < 0 else norm[:cut]
        entry = entries.get(prefix)
        if entry is not None and entry[0] == _SYMLINK:
            return prefix, "" if cut < 0 else norm[cut + 1:]
        if cut < 0:
            return None, ""
        start = cut + 1


def open_repo(start: Path, why: str) -> Any:
    """The GitPython repository holding ``start``; GitError saying ``why`` git is needed."""
    import git

    try:
        return git.Repo(start, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError) as exc:
        raise GitError(f"{start} is not inside a git repository; {why}") from exc


def open_source(package_dir: Path, ref: str | None) -> Source:
    """The working tree when ``ref`` is None, otherwise the commit it names."""
    if ref is None:
        return WorktreeSource(package_dir)
    return GitSource(package_dir, ref)


def head_is_dirty(package_dir: Path) -> bool:
    """Whether the package folder has uncommitted changes (build warns about them)."""
    src = GitSource(package_dir)
    return git_read(f"the status of {package_dir}", lambda: src.repo.is_dirty(
        untracked_files=True, path=None if src.prefix == "." else src.prefix))
