"""Where package files come from: the working tree or a git commit.

Both sources answer the same two questions (which files exist below the package root,
and what bytes a file holds) so everything downstream is blind to where it reads from.
A commit is read from git objects only, never by checking it out, so ``--ref`` sees
exactly what the commit holds whatever state the working tree is in.
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from promptops.errors import GitError, UsageError

if TYPE_CHECKING:
    import git

MANIFEST = "promptops.yaml"
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
        if not full.is_relative_to(self.root) or not full.is_file():
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
            raise GitError(f"unknown revision {rev!r} in {top}") from exc
        tree = self.commit.tree
        try:
            self.tree = tree if self.prefix == "." else tree / self.prefix
        except KeyError as exc:
            raise GitError(
                f"{self.prefix} does not exist at {rev} ({self.commit.hexsha[:12]})"
            ) from exc
        self.label = f"{rev} ({self.commit.hexsha[:12]})"
        self.origin = Origin(
            commit=self.commit.hexsha, tree=self.tree.hexsha, dirty=False, path=self.prefix
        )
        self._blobs: dict[str, git.Blob] | None = None

    def _index(self) -> dict[str, git.Blob]:
        if self._blobs is None:
            import git

            blobs: dict[str, git.Blob] = {}
            for item in self.tree.traverse():
                if isinstance(item, git.Blob):
                    blobs[posixpath.relpath(item.path, self.tree.path or ".")] = item
            self._blobs = blobs
        return self._blobs

    def files(self) -> list[str]:
        return sorted(self._index())

    def read(self, path: str, _depth: int = 0) -> bytes:
        norm = inside(path)
        blob = self._index().get(norm) if norm else None
        if blob is None:
            raise FileNotFoundError(path)
        data: bytes = blob.data_stream.read()
        if blob.mode == 0o120000:  # a symlink: follow it only while it stays in the package
            target = inside(posixpath.join(posixpath.dirname(norm or ""), data.decode()))
            if target is None or _depth > 8:
                raise FileNotFoundError(path)
            return self.read(target, _depth + 1)
        return data


def open_source(package_dir: Path, ref: str | None) -> Source:
    """The working tree when ``ref`` is None, otherwise the commit it names."""
    if ref is None:
        return WorktreeSource(package_dir)
    return GitSource(package_dir, ref)


def head_is_dirty(package_dir: Path) -> bool:
    """Whether the package folder has uncommitted changes (build warns about them)."""
    src = GitSource(package_dir)
    return src.repo.is_dirty(untracked_files=True, path=None if src.prefix == "." else src.prefix)
