"""Release policy: when the committed HEAD may be tagged ``<name>@<version>``, and why not.

A release is a promise that this version always serves the same bundle, so every check
runs against HEAD as committed (never the working tree) and refuses rather than guesses;
each refusal says what to run next. The tag is annotated and records the bundle digest
`promptops build` produces for HEAD, so a served bundle can be traced back to its release.

The checks a release must pass besides loading (tests, lint) live above this layer; the
command hands them in as ``gates``, each given the one Build of HEAD, so HEAD is read and
validated once for all of them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from promptops.errors import PackageError, Problem, PromptopsError
from promptops.git.history import History
from promptops.pipeline.build import Build
from promptops.pipeline.bundle_types import Bundle
from promptops.versioning.changes import Change
from promptops.versioning.engine import content_digest, diff_bundles
from promptops.versioning.history import (
    Release,
    latest_release,
    open_repo,
    recorded_digest,
    release_bundle,
    tag_message,
    tag_name,
)
from promptops.versioning.semver import Version, satisfies, step_level

#: A check a release must pass: None, or a refusal saying what to fix.
Gate = Callable[[Build], "str | None"]


class ReleaseRefused(PromptopsError):
    """A release that would be unsafe; the message says what to do instead."""


class HeadDoesNotLoad(ReleaseRefused):
    """The package at HEAD does not load; ``problems`` are what to show first."""

    def __init__(self, message: str, problems: list[Problem]) -> None:
        super().__init__(message)
        self.problems = problems


@dataclass(frozen=True)
class Released:
    """What a release did: ``created`` False when ``tag`` already held this bundle."""

    tag: str
    created: bool
    commit: str
    digest: str


def release(package_dir: Path, gates: tuple[Gate, ...]) -> Released:
    """Tag HEAD of the package at ``package_dir``, or raise :class:`ReleaseRefused`."""
    repo = open_repo(package_dir)
    if repo.no_commits_yet():
        raise ReleaseRefused("the repository has no commits yet: commit the package, then "
                             "run `promptops release`")
    _refuse_dirty(repo, package_dir)
    build = Build(package_dir, "HEAD", keep_asts=True)
    head = _head_bundle(build)
    for gate in gates:
        problem = gate(build)
        if problem:
            raise ReleaseRefused(problem)
    name, version = head["package"]["name"], Version.parse(head["package"]["version"])
    tag = tag_name(name, version)
    if repo.has_tag(tag):
        return _existing(repo, package_dir, tag, head)
    prev = latest_release(repo, name, "HEAD")
    changes = _check_against(package_dir, prev, head, version) if prev else []
    repo.create_tag(tag, tag_message(head, content_digest(head), prev, changes))
    return Released(tag, True, repo.head_commit(), head["digest"])


def _refuse_dirty(repo: History, package_dir: Path) -> None:
    rel = package_dir.resolve().relative_to(repo.top).as_posix()
    status = repo.status(rel)
    if status:
        files = [line[3:] for line in status]
        shown = ", ".join(files[:5]) + (f" and {len(files) - 5} more" if len(files) > 5 else "")
        raise ReleaseRefused(
            f"the package has uncommitted changes ({shown}); a release tags the committed "
            "HEAD: commit (or stash) them, then run `promptops release` again"
        )


def _head_bundle(build: Build) -> Bundle:
    try:
        return build.bundle
    except PackageError as exc:
        raise HeadDoesNotLoad(
            f"the package at HEAD does not load ({len(exc.problems)} problems above): fix "
            "them (`promptops check`), commit, and run `promptops release` again",
            list(exc.problems)) from exc


def _existing(repo: History, package_dir: Path, tag: str, head: Bundle) -> Released:
    rel = Release(tag, Version.parse(tag.rsplit("@", 1)[1]), repo.tag_commit(tag))
    recorded = recorded_digest(repo, tag)
    tagged = release_bundle(package_dir, rel)
    if recorded is None:
        recorded = tagged["digest"]
    if recorded == head["digest"]:
        return Released(tag, False, rel.commit, recorded)
    if content_digest(tagged) != content_digest(head):
        raise ReleaseRefused(
            f"content changed since {tag} ({rel.commit[:12]}) but the version is still "
            f"{rel.version}; a released version never changes: run `promptops bump auto`, "
            "commit, and run `promptops release` again"
        )
    raise ReleaseRefused(
        f"{tag} already exists for commit {rel.commit[:12]} with bundle {recorded}, and HEAD "
        f"builds {head['digest']} (same prompts, different commit); a released version is "
        "immutable: nothing new needs releasing, or bump the version to release this commit"
    )


def _check_against(
    package_dir: Path, prev: Release, head: Bundle, version: Version
) -> list[Change]:
    from promptops.versioning.changes import required_bump
    from promptops.versioning.semver import next_version

    changes = diff_bundles(release_bundle(package_dir, prev), head)
    need = required_bump(changes)
    if step_level(prev.version, version) is None:
        raise ReleaseRefused(
            f"version {version} is not above the latest release {prev.tag}: run "
            f"`promptops bump {'auto' if need else 'patch'}`, commit, and release again"
        )
    if need is not None and not satisfies(prev.version, version, need):
        raise ReleaseRefused(
            f"the changes since {prev.tag} need a {need.value} bump (at least "
            f"{next_version(prev.version, need)}) but the version is {version}: run "
            "`promptops version` to see them, `promptops bump auto`, commit, and release again"
        )
    return changes
