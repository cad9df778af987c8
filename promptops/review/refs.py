"""Which two states to compare, and which packages a change touches.

A pull request is reviewed against the point where it left its base branch, not the
base branch's tip (which may have moved on), so ``A...B`` resolves to ``merge-base(A, B)``
versus ``B`` exactly as ``git diff A...B`` does. HEAD may be the working tree (None), so
a developer sees the review of uncommitted edits before pushing.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from promptops import sources
from promptops.errors import GitError, UsageError
from promptops.sources import MANIFEST

if TYPE_CHECKING:
    import git


@dataclass(frozen=True)
class Refs:
    """The resolved comparison: what the user typed, and the commits it names."""

    base_spec: str
    base: str  # full commit sha
    head_spec: str  # "working tree" when head is None
    head: str | None  # full commit sha; None: the working tree


def open_repo(start: Path) -> git.Repo:
    repo: git.Repo = sources.open_repo(start, "diff compares git revisions")
    return repo


def _commit(repo: git.Repo, rev: str) -> str:
    import git

    try:
        return repo.commit(rev).hexsha
    except (git.BadName, ValueError, git.GitCommandError) as exc:
        raise GitError(f"unknown revision {rev!r}") from exc


def is_revision(repo: git.Repo, rev: str) -> bool:
    try:
        _commit(repo, rev)
    except GitError:
        return False
    return True


def resolve(repo: git.Repo, base: str, head: str | None) -> Refs:
    """Resolve ``BASE [HEAD]``; ``A...B`` and ``A..B`` in BASE name both ends."""
    for sep in ("...", ".."):
        if sep in base:
            if head is not None:
                raise UsageError(f"{base!r} already names both ends; drop the HEAD argument")
            left, right = base.split(sep, 1)
            left, right = left or "HEAD", right or "HEAD"
            tip = _commit(repo, right)
            if sep == "...":
                bases = repo.merge_base(_commit(repo, left), tip)
                if not bases:
                    raise GitError(f"{left!r} and {right!r} have no common ancestor")
                return Refs(f"{left} (merge base)", bases[0].hexsha, right, tip)
            return Refs(left, _commit(repo, left), right, tip)
    if head is None:
        return Refs(base, _commit(repo, base), "working tree", None)
    return Refs(base, _commit(repo, base), head, _commit(repo, head))


def _all_files(repo: git.Repo, commit: str | None) -> list[str]:
    if commit is None:
        out = repo.git.ls_files("--cached", "--others", "--exclude-standard", "-z")
    else:
        out = repo.git.ls_tree("-r", "--name-only", "-z", commit)
    return [p for p in out.split("\0") if p]


def packages_in(repo: git.Repo, commit: str | None) -> set[str]:
    """Repository-relative folders ("." for the root) holding a manifest at ``commit``."""
    found = set()
    for path in _all_files(repo, commit):
        if posixpath.basename(path) == MANIFEST:
            found.add(posixpath.dirname(path) or ".")
    if commit is None:  # a deleted but still indexed manifest is not a package
        top = Path(repo.working_tree_dir or ".")
        found = {p for p in found if (top / p / MANIFEST).is_file()}
    return found


def changed_files(repo: git.Repo, refs: Refs) -> list[str]:
    if refs.head is None:
        out = repo.git.diff("--name-only", "--no-renames", "-z", refs.base)
        out += "\0" + repo.git.ls_files("--others", "--exclude-standard", "-z")
    else:
        out = repo.git.diff("--name-only", "--no-renames", "-z", refs.base, refs.head)
    return sorted({p for p in out.split("\0") if p})


def touched_packages(repo: git.Repo, refs: Refs) -> list[str]:
    """Package folders (at either end) with at least one changed file below them.

    A file belongs to its innermost package, so editing a nested package does not
    mark its parent touched.
    """
    packages = packages_in(repo, refs.base) | packages_in(repo, refs.head)
    touched = set()
    for path in changed_files(repo, refs):
        owner = _owner(path, packages)
        if owner is not None:
            touched.add(owner)
    return sorted(touched)


def _owner(path: str, packages: set[str]) -> str | None:
    folder = posixpath.dirname(path)
    while True:
        if (folder or ".") in packages:
            return folder or "."
        if not folder:
            return None
        folder = posixpath.dirname(folder)
