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

from promptops.errors import GitError, UsageError
from promptops.git.history import History
from promptops.pipeline.source import MANIFEST


@dataclass(frozen=True)
class Refs:
    """The resolved comparison: what the user typed, and the commits it names."""

    base_spec: str
    base: str  # full commit sha
    head_spec: str  # "working tree" when head is None
    head: str | None  # full commit sha; None: the working tree


def open_repo(start: Path) -> History:
    return History.open(start, "diff compares git revisions")


def _commit(repo: History, rev: str) -> str:
    return repo.commit(rev)


def is_revision(repo: History, rev: str) -> bool:
    return repo.is_revision(rev)


def resolve(repo: History, base: str, head: str | None) -> Refs:
    """Resolve ``BASE [HEAD]``; ``A...B`` and ``A..B`` in BASE name both ends."""
    for sep in ("...", ".."):
        if sep in base:
            if head is not None:
                raise UsageError(f"{base!r} already names both ends; drop the HEAD argument")
            left, right = base.split(sep, 1)
            left, right = left or "HEAD", right or "HEAD"
            tip = _commit(repo, right)
            if sep == "...":
                merged = repo.merge_base(_commit(repo, left), tip)
                if merged is None:
                    raise GitError(f"{left!r} and {right!r} have no common ancestor; compare "
                                   f"them directly with `promptops diff {left}..{right}`")
                return Refs(f"{left} (merge base)", merged, right, tip)
            return Refs(left, _commit(repo, left), right, tip)
    if head is None:
        return Refs(base, _commit(repo, base), "working tree", None)
    return Refs(base, _commit(repo, base), head, _commit(repo, head))


def packages_in(repo: History, commit: str | None) -> set[str]:
    """Repository-relative folders ("." for the root) holding a manifest at ``commit``."""
    found = set()
    for path in repo.files(commit):
        if posixpath.basename(path) == MANIFEST:
            found.add(posixpath.dirname(path) or ".")
    if commit is None:  # a deleted but still indexed manifest is not a package
        found = {p for p in found if (repo.top / p / MANIFEST).is_file()}
    return found


def changed_files(repo: History, refs: Refs) -> list[str]:
    return repo.changed_files(refs.base, refs.head)


def touched_packages(repo: History, refs: Refs) -> list[str]:
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
