"""Where package files come from: the working tree or a git commit.

Both sources answer the same two questions (which files exist below the package root,
and what bytes a file holds) so everything downstream is blind to where it reads from.
A commit is read from git objects only, never by checking it out, so ``--ref`` sees
exactly what the commit holds whatever state the working tree is in.
"""

from __future__ import annotations

import os
import posixpath
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from promptops.errors import GitError, UsageError

MANIFEST = "promptops.yaml"
_BATCH_LIMIT = 1 << 20  # blobs up to 1 MiB are read together, larger ones one by one
_SKIP_DIRS = frozenset({".git", "__pycache__", "node_modules", ".venv"})


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


class OutsidePackage(FileNotFoundError):
    """A symlink whose target leaves the package: absent for every reader, but the loader
    says why, since "not found" about a file the author can see sends them hunting."""


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
            dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
            rel = Path(dirpath).relative_to(self.root).as_posix()
            for name in filenames:
                found.append(name if rel == "." else f"{rel}/{name}")
        return sorted(found)

    def read(self, path: str) -> bytes:
        norm = inside(path)
        if norm is None:
            raise FileNotFoundError(path)
        full = (self.root / norm).resolve()
        # A symlink may point anywhere; only what stays inside the package is readable.
        if not full.is_relative_to(self.root):
            raise (OutsidePackage if os.path.lexists(self.root / norm) else FileNotFoundError)(
                path)
        if not full.is_file():
            raise FileNotFoundError(path)
        return full.read_bytes()


def _worktree_origin(root: Path) -> Origin:
    top = _repo_top(root)
    rel = root.relative_to(top).as_posix() if top else "."
    return Origin(commit=None, tree=None, dirty=True, path=rel)


def _repo_top(folder: Path) -> Path | None:
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def _unresolved(repo: Any, rev: str, top: Path) -> str:
    """Why ``rev`` names no commit, in git's own words when the repository is damaged."""
    import git

    try:
        repo.git.rev_parse("--verify", "--end-of-options", f"{rev}^{{commit}}")
    except git.GitCommandError as exc:
        fatal = [ln.split("fatal:", 1)[1].strip(" '") for ln in str(exc.stderr).splitlines()
                 if "fatal:" in ln and "Needed a single revision" not in ln]
        if fatal:
            return f"cannot read revision {rev!r} in {top}: {fatal[0]}"
    if rev == "HEAD" and not repo.git.rev_list("-n1", "--all"):
        return (f"the repository at {top} has no commits yet: commit the package first "
                "(or build the working tree with --worktree)")
    return f"unknown revision {rev!r} in {top}"


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
            raise GitError(_unresolved(self.repo, rev, top)) from exc
        tree = self.commit.tree
        try:
            self.tree = tree if self.prefix == "." else tree / self.prefix
        except KeyError as exc:
            cwd = Path.cwd().resolve()
            here = os.path.relpath(package_dir, cwd) if top in (cwd, *cwd.parents) else None
            git_ = "git" if here else f"git -C {top}"
            hint = (f": it is not committed yet; commit it ({git_} add -- {here or self.prefix}"
                    f" && {git_} commit -m 'Add {self.prefix}'); `promptops build --worktree` "
                    "builds uncommitted files"
                    if self.repo.head.is_valid() and self.commit == self.repo.head.commit else "")
            raise GitError(
                f"{self.prefix} does not exist at {rev} ({self.commit.hexsha[:12]}){hint}"
            ) from exc
        self.label = f"{rev} ({self.commit.hexsha[:12]})"
        self.origin = Origin(
            commit=self.commit.hexsha, tree=self.tree.hexsha, dirty=False, path=self.prefix
        )
        self._entries: dict[str, tuple[int, str, int]] | None = None  # path -> mode, sha, size
        self._data: dict[str, bytes] = {}
        self._read_ahead = False

    def _index(self) -> dict[str, tuple[int, str, int]]:
        if self._entries is None:
            raw = self.repo.git.ls_tree("-r", "-l", "-z", self.tree.hexsha, stdout_as_string=False)
            entries: dict[str, tuple[int, str, int]] = {}
            for record in raw.split(b"\0"):
                head, _, name = record.partition(b"\t")
                fields = head.split()
                if len(fields) != 4 or fields[1] != b"blob":
                    continue  # submodules (commit entries) are not package files
                path = name.decode("utf-8", "surrogateescape")
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

    def read(self, path: str, _depth: int = 0) -> bytes:
        norm = inside(path)
        entry = self._index().get(norm) if norm else None
        if entry is None or norm is None:
            raise FileNotFoundError(path)
        mode, sha, _ = entry
        if not self._read_ahead:
            self.read_ahead(list(self._index()))
        data = self._data.get(norm)
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
        if mode == 0o120000:  # a symlink: follow it only while it stays in the package
            target = inside(posixpath.join(posixpath.dirname(norm), data.decode()))
            if target is None:
                raise OutsidePackage(path)
            if _depth > 8:
                raise FileNotFoundError(path)
            return self.read(target, _depth + 1)
        return data


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
    return src.repo.is_dirty(untracked_files=True, path=None if src.prefix == "." else src.prefix)
