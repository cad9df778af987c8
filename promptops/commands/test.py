"""`promptops test`: run the package's deterministic prompt tests (no LLM is called)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from promptops.commands._common import package_dir
from promptops.commands.choices import Format
from promptops.console import Console
from promptops.errors import UsageError

if TYPE_CHECKING:
    from promptops.commands._watch import OnError
    from promptops.testing.cases import Case


def run(
    *,
    path: Path | None,
    ref: str | None,
    patterns: list[str],
    update: bool,
    junit: Path | None,
    fmt: Format,
    jobs: int | None,
    console: Console,
) -> int:
    from promptops.fsutil import atomic_write
    from promptops.pipeline.build import Build
    from promptops.testing import report
    from promptops.testing.suite import run_suite

    if jobs is not None and jobs < 1:
        raise UsageError(f"-j must be at least 1, got {jobs}")
    with console.progress("test", "cases") as progress:
        result = run_suite(Build(package_dir(path), ref), patterns=patterns, update=update,
                           jobs=jobs, progress=progress)
    if junit is not None:
        atomic_write(junit, report.junit_xml(result))
    if fmt == "json":
        console.echo(json.dumps(report.as_json(result), indent=2, ensure_ascii=False))
    elif console.verbosity >= 0 or not result.ok:
        lines = report.text_lines(result, verbose=console.verbosity > 0)
        console.echo("\n".join(lines if console.verbosity >= 0 else lines[-1:]))
    return 0 if result.ok else 1


def watch(
    *,
    path: Path | None,
    patterns: list[str],
    fmt: Format,
    jobs: int | None,
    console: Console,
    on_error: OnError,
    fixed: bool = False,
) -> int:
    """``promptops test --watch``: run the suite, then after every save the cases it touched.

    A case is touched when its prompt's file was saved or its bundle entry changed (or it
    is new), when its test file or its snapshot was saved (since the last run that loaded:
    the fix of a broken save re-runs what the broken one touched); a save that changes what every
    prompt may read (a template or partial, a resource, the manifest) re-runs everything:
    which prompt includes what is the renderer's business, and re-running all is never
    wrong. Snapshots are never written here (--update-snapshots is refused).
    """
    from promptops.commands._watch import follow
    from promptops.pipeline.memo import FileMemo

    if fixed:  # --ref, --update-snapshots or --junit-xml
        raise UsageError("--watch runs the working tree as it is saved; it cannot be "
                         "combined with --ref, --update-snapshots or --junit-xml")
    if jobs is not None and jobs < 1:
        raise UsageError(f"-j must be at least 1, got {jobs}")
    folder = package_dir(path)
    memo = FileMemo()
    last: dict[str, object] = {}  # prompt name -> its bundle entry; "" -> the rest

    pending: set[str] = set()  # saved since the last run that loaded (a broken save's too)

    def once(saved: set[str] | None) -> None:
        from promptops.pipeline.build import Build
        from promptops.testing import report
        from promptops.testing.suite import run_suite

        if saved is not None:
            pending.update(saved)
        build = Build(folder, None, memo=memo)
        bundle = build.bundle  # a package that does not load raises: reported, watched
        now: dict[str, object] = {p["name"]: p for p in bundle["prompts"]}
        now[""] = (bundle["templates"], bundle["resources"], bundle["package"])
        keep = None
        if saved is not None and last and last.get("") == now[""]:
            touched = set(pending)
            names = {p["name"] for p in bundle["prompts"]
                     if p["source"] in touched or last.get(p["name"]) != p}

            def keep(case: Case) -> bool:
                return (case.prompt in names or case.path in touched
                        or (case.wants_snapshot and case.snapshot_path in touched))
        last.clear()
        last.update(now)
        pending.clear()
        result = run_suite(build, patterns=patterns, jobs=jobs, keep=keep)
        if not result.cases:
            console.info("the save changed no prompt, test case or snapshot: nothing to re-run")
            return
        if fmt == "json":
            console.echo(json.dumps(report.as_json(result), indent=2, ensure_ascii=False))
        else:
            lines = report.text_lines(result, verbose=console.verbosity > 0)
            console.echo("\n".join(lines if console.verbosity >= 0 else lines[-1:]))

    return follow(folder, once, console, on_error)
