"""`promptops version`: is the manifest version big enough for what changed?

Compares the working tree with the latest release tag reachable from HEAD, so it
answers the question a developer has before committing, and CI has before merging:
exit 1 when the version in promptops.yaml is lower than the changes require.
"""

from __future__ import annotations

import json
from pathlib import Path

from promptops.commands.choices import Format
from promptops.console import Console
from promptops.pipeline.source import find_package
from promptops.versioning.changes import counts
from promptops.versioning.history import Status, status


def run(*, path: Path | None, fmt: Format, console: Console) -> int:
    package_dir = find_package(path or Path.cwd())
    st = status(package_dir)
    if fmt == "json":
        console.echo(json.dumps(st.to_json(), indent=2, ensure_ascii=False))
    else:
        _text(st, console)
    if not st.ok:
        console.echo(f"{console.style('error', fg='red', bold=True)}: {verdict(st)}", err=True)
        return 1
    return 0


def verdict(st: Status) -> str:
    """Why the version is not acceptable and what to run; '' when it is."""
    if st.ok or st.release is None:
        return ""
    rel = st.release
    if st.version <= rel.version and st.required is None:
        return (f"version {st.version} is lower than the released {rel.tag}: set a higher "
                "version (`promptops bump patch`)")
    if st.version.same_precedence(rel.version):
        lead = f"content changed since {rel.tag} but the version is still {st.version}"
    else:
        need = st.required.value if st.required else "a"
        lead = (f"version {st.version} is too low for the changes since {rel.tag} "
                f"({need} bump needed)")
    return f"{lead}: run `promptops bump auto` (sets {st.suggested})"


def _text(st: Status, console: Console) -> None:
    console.echo(f"package   {st.package}")
    console.echo(f"version   {st.version}")
    if st.release is None:
        console.echo(f"release   none yet (`promptops release` will tag {st.package}@{st.version})")
        return
    console.echo(f"release   {st.release.tag} ({st.release.commit[:12]})")
    n = counts(st.changes)
    detail = ", ".join(f"{v} {k}" for k, v in n.items())
    console.echo(f"changes   {len(st.changes)} since {st.release.tag}"
                 + (f" ({detail})" if st.changes else ""))
    colours = {"major": "red", "minor": "yellow", "patch": "cyan"}
    for c in st.changes:
        console.echo(f"  {console.style(c.level.value, fg=colours[c.level.value])}: "
             f"{c.summary().split(': ', 1)[1]}")
    if st.required is None:
        console.echo("required  none (served content unchanged)")
    else:
        console.echo(f"required  {st.required.value} bump (at least {st.suggested})")
    console.echo(f"status    {'ok' if st.ok else console.style('version too low', fg='red')}")
