"""`promptops bump`: change the version in promptops.yaml and nothing else.

A manifest is hand-written and reviewed, so a bump must show in a diff as one line.
The edit goes through ruamel.yaml's round-trip dumper, but ruamel may reflow
(indentation, flow mappings, line width, CRLF), so its output is accepted only when
it equals a precise in-place replacement of the version scalar at the position ruamel
reports; otherwise the in-place edit is used. Either way the result is re-parsed and
must differ from the original only in ``version``.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from promptops.commands.choices import BumpKind
from promptops.console import Console
from promptops.errors import PackageError, Problem, PromptopsError, UsageError
from promptops.fsutil import atomic_write
from promptops.pipeline.source import MANIFEST, Refused, WorktreeSource, find_package
from promptops.versioning.semver import Level, Version

_BOM = "\ufeff"
_PLAIN_END = " \t\r\n,}]#"


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


def set_version(text: str, new: str) -> tuple[str, str]:
    """``text`` with its top-level version scalar replaced; (result, method used)."""
    from ruamel.yaml import YAML

    bom = _BOM if text.startswith(_BOM) else ""
    body = text.removeprefix(bom)
    rt = YAML(typ="rt")
    rt.preserve_quotes = True
    rt.width = 1 << 30
    doc: Any = rt.load(body)
    if not hasattr(doc, "lc") or not isinstance(doc.get("version"), str):
        raise UsageError(f"{MANIFEST} has no top-level `version:` string")
    old = str(doc["version"])
    line, col = doc.lc.value("version")
    expected = _in_place(body, line, col, old, new)
    node = doc["version"]
    doc["version"] = type(node)(new) if type(node) is not str else new
    out = io.StringIO()
    rt.dump(doc, out)
    via_ruamel = out.getvalue()
    result, method = (via_ruamel, "ruamel round-trip") if via_ruamel == expected else (
        expected, "in-place")
    _verify(body, result, new)
    return bom + result, method


def _in_place(text: str, line: int, col: int, old: str, new: str) -> str:
    start = 0
    for _ in range(line):
        nl = text.find("\n", start)
        if nl < 0:
            raise PromptopsError(f"cannot locate the version in {MANIFEST} (line {line + 1})")
        start = nl + 1
    at = start + col
    quote = text[at] if at < len(text) and text[at] in "'\"" else ""
    token = f"{quote}{old}{quote}"
    after = at + len(token)
    if not text.startswith(token, at) or (not quote and after < len(text)
                                          and text[after] not in _PLAIN_END):
        raise PromptopsError(
            f"the version in {MANIFEST} is not written as a simple scalar on line {line + 1}; "
            "edit it by hand"
        )
    return text[:at] + quote + new + quote + text[after:]


def _verify(before: str, after: str, new: str) -> None:
    """Same data but the version, and every line but one byte-identical."""
    from ruamel.yaml import YAML

    safe = YAML(typ="safe", pure=False)
    a, b = safe.load(before), safe.load(after)
    a["version"] = new
    changed = [
        i for i, (x, y) in enumerate(zip(before.splitlines(True), after.splitlines(True),
                                         strict=False)) if x != y
    ]
    same_shape = len(before.splitlines()) == len(after.splitlines())
    if a != b or len(changed) != 1 or not same_shape:
        raise PromptopsError(f"editing the version would change more of {MANIFEST}; "
                             "edit it by hand")
