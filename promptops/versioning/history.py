"""Releases in git history: tags named ``<name>@<version>`` and the status against them.

A release is an annotated tag whose message records the bundle digest of the tagged
commit (see ``tag_message``), so anyone can check that a served bundle is the one
that was released. `version`, `bump auto` and `release` all ask the same question
through ``status``: what changed since the latest release reachable from here, and is
the manifest version big enough for it?
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from promptops.errors import GitError
from promptops.git.history import History, from_git
from promptops.versioning.changes import Change, counts, required_bump
from promptops.versioning.engine import diff_bundles
from promptops.versioning.semver import Level, Version, is_version, next_version, satisfies

if TYPE_CHECKING:
    from promptops.pipeline.bundle_types import Bundle

_DIGEST_LINE = re.compile(r"^bundle-digest: (sha256:[0-9a-f]{64})$", re.MULTILINE)
MAX_SUMMARY_LINES = 200


def tag_name(package: str, version: Version | str) -> str:
    return f"{package}@{version}"


@dataclass(frozen=True)
class Release:
    tag: str
    version: Version
    commit: str


def open_repo(package_dir: Path) -> History:
    return History.open(package_dir,
                        "releases are git tags: run `git init` and commit the package first")


def releases(repo: History, package: str) -> list[Release]:
    """Every release tag of ``package``, lowest precedence first."""
    prefix = f"{package}@"
    found = []
    for name, commit in repo.tags():
        rest = name[len(prefix):] if name.startswith(prefix) else None
        if rest is not None and is_version(rest):
            found.append(Release(name, Version.parse(rest), commit))
    return sorted(found, key=lambda r: r.version.key())


def latest_release(repo: History, package: str, rev: str = "HEAD") -> Release | None:
    """The highest-precedence release whose commit is ``rev`` or an ancestor of it."""
    try:
        head = repo.repo.commit(rev).hexsha
    except Exception as exc:  # BadName or ValueError: no commit yet, or one git cannot read
        if not (isinstance(exc, ValueError) or from_git(exc)):
            raise
        if rev == "HEAD" and not repo.no_commits_yet():
            raise
        return None  # no commits yet
    for rel in reversed(releases(repo, package)):
        if repo.is_ancestor(rel.commit, head):
            return rel
    return None


def recorded_digest(repo: History, tag: str) -> str | None:
    """The bundle digest an annotated release tag records; None if it records none."""
    message = repo.tag_message(tag)
    if message is None:
        return None
    found = _DIGEST_LINE.search(message)
    return found.group(1) if found else None


@dataclass(frozen=True)
class Status:
    package: str
    version: Version
    release: Release | None
    changes: list[Change]
    required: Level | None
    ok: bool
    suggested: Version | None  # the smallest version that satisfies the changes

    def to_json(self) -> dict[str, object]:
        rel = self.release
        return {
            "package": self.package,
            "version": str(self.version),
            "release": None if rel is None else {
                "tag": rel.tag, "version": str(rel.version), "commit": rel.commit
            },
            "required_bump": None if self.required is None else self.required.value,
            "suggested_version": None if self.suggested is None else str(self.suggested),
            "ok": self.ok,
            "counts": counts(self.changes),
            "changes": [c.to_json() for c in self.changes],
        }


def status(package_dir: Path, ref: str | None = None, *, rev: str = "HEAD") -> Status:
    """Compare the package at ``ref`` (None: working tree) with the latest release."""
    from promptops.pipeline.build import Build

    head = Build(package_dir, ref).bundle
    name = head["package"]["name"]
    current = Version.parse(head["package"]["version"])
    repo = open_repo(package_dir)
    rel = latest_release(repo, name, rev)
    if rel is None:
        return Status(name, current, None, [], None, True, None)
    base = release_bundle(package_dir, rel)
    changes = diff_bundles(base, head)
    need = required_bump(changes)
    suggested = next_version(rel.version, need) if need else None
    return Status(name, current, rel, changes, need, satisfies(rel.version, current, need),
                  suggested)


def release_bundle(package_dir: Path, rel: Release) -> Bundle:
    from promptops.pipeline.build import Build

    try:
        return Build(package_dir, rel.commit).bundle
    except GitError as exc:
        raise GitError(
            f"cannot read the package at release {rel.tag} ({rel.commit[:12]}): {exc}"
        ) from exc


def tag_message(bundle: Bundle, content: str, prev: Release | None, changes: list[Change]) -> str:
    """The annotated tag message: machine-readable header lines, then the change summary."""
    pkg = bundle["package"]
    need = required_bump(changes)
    lines = [
        f"{pkg['name']} {pkg['version']}",
        "",
        f"bundle-digest: {bundle['digest']}",
        f"content-digest: {content}",
        f"commit: {bundle['source']['commit']}",
        f"previous: {prev.tag if prev else 'none'}",
        f"required-bump: {need.value if need else 'none'}",
        "",
    ]
    if prev is None:
        lines.append("First release.")
    elif not changes:
        lines.append(f"No changes to served content since {prev.tag}.")
    else:
        lines.append(f"Changes since {prev.tag}:")
        lines.extend(f"- {c.summary()}" for c in changes[:MAX_SUMMARY_LINES])
        if len(changes) > MAX_SUMMARY_LINES:
            lines.append(f"- ... and {len(changes) - MAX_SUMMARY_LINES} more")
    return "\n".join(lines) + "\n"
