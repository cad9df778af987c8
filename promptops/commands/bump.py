"""`promptops bump`: change the version in promptops.yaml and nothing else.

A manifest is hand-written and reviewed, so a bump must show in a diff as one line:
the edit itself is :func:`promptops.versioning.manifest_edit.set_version`. This module
picks the version (a level, a pre-release, or ``auto`` from the changes since the last
release) and writes the file atomically.
"""

from __future__ import annotations

from pathlib import Path

from promptops.commands.choices import BumpKind
from promptops.console import Console
from promptops.errors import PackageError, Problem, UsageError
from promptops.fsutil import atomic_write
from promptops.pipeline.source import MANIFEST, Refused, WorktreeSource, find_package
from promptops.versioning.manifest_edit import set_version
from promptops.versioning.semver import Level, Version


def run(*, kind: BumpKind, path: Path | None, pre: str | None, console: Console) -> int:
    package_dir = find_package(path or Path.cwd())
    manifest = package_dir / MANIFEST
    try:  # as package content: a manifest that is a symlink out of the package is refused
        raw = WorktreeSource(package_dir).read(MANIFEST)
    except Refused as exc:
        raise PackageError([Problem(MANIFEST, 1, 1, f"this file is {exc.why}")]) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{manifest} is not valid UTF-8") from exc
    current = _current(text, manifest)
    new = _target(kind, current, package_dir, pre, console)
    if new is None:
        return 0
    if not new > current:
        raise UsageError(f"{new} is not above the current version {current}; choose another bump")
    edited, method = set_version(text, str(new))
    atomic_write(manifest, edited.encode("utf-8"), mode=manifest.stat().st_mode & 0o7777,
                 root=package_dir)
    if console.verbosity > 0:
        console.info(f"edited {MANIFEST} via {method} edit")
    console.echo(f"{current} -> {new}")
    return 0


def _current(text: str, manifest: Path) -> Version:
    from promptops.pipeline.yamlio.loader import YamlProblem, load_yaml

    try:  # the package's own loader: its limits keep a hostile manifest from crashing us
        data = load_yaml(MANIFEST, text.encode("utf-8")).data
    except YamlProblem as exc:
        raise PackageError([exc.problem]) from None
    version = data.get("version") if isinstance(data, dict) else None
    if not isinstance(version, str):
        raise UsageError(f"{manifest} has no `version:` string to bump")
    try:
        return Version.parse(version)
    except ValueError as exc:
        raise UsageError(f"{manifest}: {exc}") from exc


def _target(kind: BumpKind, current: Version, package_dir: Path, pre: str | None,
            console: Console) -> Version | None:
    if kind is BumpKind.auto:
        new = _auto(current, package_dir, console)
        if new is None:
            return None
        return _pre(current, new, pre) if pre else new
    level = Level(kind)
    target = current.bump(level)
    return _pre(current, target, pre) if pre else target


def _pre(current: Version, target: Version, ident: str) -> Version:
    """A pre-release of ``target``: continues the current series when it is the same core."""
    try:
        if current.pre and current.core == target.core:
            return current.with_pre(ident)
        return target.with_pre(ident)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc


def _auto(current: Version, package_dir: Path, console: Console) -> Version | None:
    from promptops.versioning.history import status

    st = status(package_dir)
    if st.release is None:
        raise UsageError(
            "no release tag yet, so there is nothing to compare with: choose the bump "
            "yourself (`promptops bump major|minor|patch`) or release the current version"
        )
    if st.required is None:
        console.echo(f"no served content changed since {st.release.tag}; version stays {current}")
        return None
    if st.ok:
        console.echo(f"{current} already covers the {st.required.value} changes since "
                     f"{st.release.tag}; nothing to do")
        return None
    assert st.suggested is not None
    return st.suggested
