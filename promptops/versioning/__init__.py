"""The semantic diff engine: two bundles in, a classified change list out.

Public surface for `version`, `bump`, `release`, lint's 6xx rules and `diff`::

    from promptops.versioning import diff_refs, required_bump
    changes = diff_refs(package_dir, "v1-commit")      # that commit vs the working tree
    required_bump(changes)                               # Level.major / minor / patch / None
"""

from __future__ import annotations

from pathlib import Path

from promptops.versioning.changes import Change, Kind, by_level, counts, ordered, required_bump
from promptops.versioning.engine import content_digest, diff_bundles
from promptops.versioning.semver import Level

__all__ = [
    "Change",
    "Kind",
    "Level",
    "by_level",
    "content_digest",
    "counts",
    "diff_bundles",
    "diff_refs",
    "ordered",
    "required_bump",
]


def diff_refs(package_dir: Path, base: str | None, head: str | None = None) -> list[Change]:
    """Changes from the package at ``base`` to ``head`` (a git revision; None: working tree)."""
    from promptops.pipeline.build import Build

    return diff_bundles(Build(package_dir, base).bundle, Build(package_dir, head).bundle)
