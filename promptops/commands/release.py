"""`promptops release`: tag the committed HEAD as ``<name>@<version>``, once.

A release is a promise that this version always serves the same bundle, so every
check runs against HEAD as committed (never the working tree) and refuses rather than
guesses; each refusal says what to run next. The tag is annotated and records the
bundle digest `promptops build` produces for HEAD, so a served bundle can be traced
back to its release.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from promptops.console import Console
from promptops.errors import PackageError, PromptopsError
from promptops.git.history import History
from promptops.pipeline.build import Build
from promptops.pipeline.bundle import Bundle
from promptops.pipeline.source import find_package
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

#: Checks a release must pass besides loading: each gets the one Build of HEAD (so HEAD
#: is validated once for all of them) and returns None or a refusal saying what to fix.
Gate = Callable[["Build"], "str | None"]


def _test_gate(head: Build) -> str | None:
    from promptops.testing.suite import release_gate

    return release_gate(head)


def _lint_gate(head: Build) -> str | None:
    from promptops.lint.runner import gate, lint_package

    ok, lines, summary = gate(lint_package(head))
    if ok:
        return None
    return "lint fails at HEAD (" + summary + "); fix these, commit, then release:\n" + \
        "\n".join(lines)


GATES: tuple[Gate, ...] = (_test_gate, _lint_gate)


class ReleaseRefused(PromptopsError):
    """A release that would be unsafe; the message says what to do instead."""


def run(*, path: Path | None, console: Console, gates: tuple[Gate, ...] = GATES) -> int:
    package_dir = find_package(path or Path.cwd())
    repo = open_repo(package_dir)
    if repo.no_commits_yet():
        raise ReleaseRefused("the repository has no commits yet: commit the package, then "
                             "run `promptops release`")
    _refuse_dirty(repo, package_dir)
    build = Build(package_dir, "HEAD", keep_asts=True)
    head = _head_bundle(build, console)
    for gate in gates:
        problem = gate(build)
        if problem:
            raise ReleaseRefused(problem)
    name, version = head["package"]["name"], Version.parse(head["package"]["version"])
    tag = tag_name(name, version)
    if repo.has_tag(tag):
        return _existing(repo, package_dir, tag, head, console)
    prev = latest_release(repo, name, "HEAD")
    changes = _check_against(package_dir, prev, head, version) if prev else []
    message = tag_message(head, content_digest(head), prev, changes)
    repo.create_tag(tag, message)
    console.echo(f"released {tag} at {repo.head_commit()[:12]} ({head['digest']})")
    console.info(f"next: publish it with `git push origin {tag}`, then "
                 f"`promptops build --ref {tag}`")
    return 0


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


def _head_bundle(build: Build, console: Console) -> Bundle:
    try:
        return build.bundle
    except PackageError as exc:
        for p in exc.problems:
            console.echo(str(p), err=True)
        raise ReleaseRefused(
            f"the package at HEAD does not load ({len(exc.problems)} problems above): fix "
            "them (`promptops check`), commit, and run `promptops release` again"
        ) from exc


def _existing(repo: History, package_dir: Path, tag: str, head: Bundle,
              console: Console) -> int:
    rel = Release(tag, Version.parse(tag.rsplit("@", 1)[1]), repo.tag_commit(tag))
    recorded = recorded_digest(repo, tag)
    tagged = release_bundle(package_dir, rel)
    if recorded is None:
        recorded = tagged["digest"]
    if recorded == head["digest"]:
        console.echo(f"{tag} is already released with this bundle ({recorded}); nothing to do")
        return 0
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
