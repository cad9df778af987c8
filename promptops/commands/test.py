"""`promptops test`: run the package's deterministic prompt tests (no LLM is called)."""

from __future__ import annotations

import json
from pathlib import Path

from promptops.commands._common import package_dir, refuse_contradictions
from promptops.commands.choices import Format
from promptops.console import Console
from promptops.errors import UsageError


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
    build = Build(package_dir(path), ref)
    refuse_contradictions(build, console)  # serve's verdict: a suite cannot pass it
    with console.progress("test", "cases") as progress:
        result = run_suite(build, patterns=patterns, update=update,
                           jobs=jobs, progress=progress)
    if junit is not None:
        atomic_write(junit, report.junit_xml(result))
    if fmt == "json":
        console.echo(json.dumps(report.as_json(result), indent=2, ensure_ascii=False))
    elif console.verbosity >= 0 or not result.ok:
        lines = report.text_lines(result, verbose=console.verbosity > 0)
        console.echo("\n".join(lines if console.verbosity >= 0 else lines[-1:]))
    return 0 if result.ok else 1
