"""Git, in one place: which repository holds a folder, and everything read from it.

:meth:`Repo.locate` is the one way promptops finds a repository (the build, lint's cache,
serve's follower, init, review and release all ask it), with the standard library only,
since serve calls it on its cold path. The modules below divide the work by cost:
:mod:`~promptops.git.refs` reads refs from files (stdlib, every 50 ms while serving),
:mod:`~promptops.git.objects` reads trees and blobs through ``git`` pipes (the build),
:mod:`~promptops.git.history` holds what needs GitPython (tags, merge bases, status,
commits). Every :class:`~promptops.errors.GitError` says what to do next, as
pre-commit's git errors do.

Nothing else is imported here: ``import promptops.git.refs`` must not pull in GitPython.
"""

from __future__ import annotations

import os
from pathlib import Path

from promptops.errors import GitError


def executable() -> str:
    """The git to run: ``$PROMPTOPS_GIT``, else ``git`` on PATH.

    A GUI app (Claude Desktop, Cursor) starts serve with a minimal PATH that may not
    hold git (Homebrew's ``/opt/homebrew/bin`` is not on it), so ``promptops install``
    records the installing shell's git here (and as ``GIT_PYTHON_GIT_EXECUTABLE``, the
    variable GitPython reads itself).
    """
    return os.environ.get("PROMPTOPS_GIT") or "git"


def no_optional_locks() -> dict[str, str]:
    """The environment for a git command that only reads, run beside the user's own git.

    ``git status`` and ``git diff`` against the working tree refresh the index when they
    can, which takes ``.git/index.lock``: a ``git commit`` the user (or an editor) runs at
    that moment fails with "index.lock: File exists". ``GIT_OPTIONAL_LOCKS=0`` is git's
    switch for background readers (see git(1)): the command answers the same without
    writing anything.
    """
    return {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}


class Repo:
    """A repository as git lays it out on disk, and where a folder sits inside it.

    Equal repositories compare equal whatever folder they were located from: ``prefix``
    belongs to the question, not to the repository. Frozen, and a plain class rather than
    a dataclass: serve's follower locates its repository on the cold path, and importing
    :mod:`dataclasses` (with inspect, ast, dis, tokenize) plus one frozen dataclass costs
    a repository-mode start ~45 M instructions, ~15% of the floor's whole start.
    """

    __slots__ = ("common_dir", "git_dir", "prefix", "top")
    top: Path  # the working tree root
    git_dir: Path  # this working tree's git dir: HEAD lives here
    common_dir: Path  # shared by all worktrees: refs, packed-refs, objects, our caches
    prefix: str  # the located folder, "." at the top

    def __init__(self, top: Path, git_dir: Path, common_dir: Path, prefix: str = ".") -> None:
        for name, value in (("top", top), ("git_dir", git_dir), ("common_dir", common_dir),
                            ("prefix", prefix)):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}: a Repo is frozen")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}: a Repo is frozen")

    def _key(self) -> tuple[Path, Path, Path]:
        return (self.top, self.git_dir, self.common_dir)

    def __eq__(self, other: object) -> bool:
        return self._key() == other._key() if isinstance(other, Repo) else NotImplemented

    def __hash__(self) -> int:
        return hash(self._key())

    def __reduce__(self) -> tuple[type[Repo], tuple[Path, Path, Path, str]]:
        """Pickled and copied by its fields (the frozen ``__setattr__`` refuses slot state)."""
        return (Repo, (self.top, self.git_dir, self.common_dir, self.prefix))

    def __repr__(self) -> str:
        return (f"Repo(top={self.top!r}, git_dir={self.git_dir!r}, "
                f"common_dir={self.common_dir!r}, prefix={self.prefix!r})")

    @classmethod
    def find(cls, path: Path) -> Repo | None:
        """The repository holding ``path`` (a folder that may not exist yet: its nearest
        existing parent is asked), or None outside any repository."""
        folder = path.resolve()
        for top in (folder, *folder.parents):
            dotgit = top / ".git"
            if dotgit.is_dir():
                git_dir = dotgit
            elif dotgit.is_file():
                git_dir = _gitdir_file(dotgit)
            else:
                continue
            common = git_dir
            pointer = git_dir / "commondir"  # linked worktrees share the main repository's refs
            if pointer.is_file():
                common = (git_dir / pointer.read_text().strip()).resolve()
            return cls(top=top, git_dir=git_dir, common_dir=common,
                       prefix=folder.relative_to(top).as_posix())
        return None

    @classmethod
    def locate(cls, path: Path, why: str) -> Repo:
        """The repository holding ``path``; a GitError saying ``why`` git is needed when
        there is none (``why`` completes "... is not inside a git repository; ")."""
        repo = cls.find(path)
        if repo is None:
            raise GitError(f"{path} is not inside a git repository; {why}")
        return repo


def _gitdir_file(dotgit: Path) -> Path:
    """Worktrees and submodules have a ``.git`` file saying where their git dir is."""
    text = dotgit.read_text().strip()
    if not text.startswith("gitdir:"):
        raise GitError(f"{dotgit}: not a gitdir file; git cannot read this repository either "
                       "(`git status` says what is wrong)")
    return (dotgit.parent / text[len("gitdir:") :].strip()).resolve()
