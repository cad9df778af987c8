"""`promptops check`: the aggregate gate a user and CI run.

It loads and validates the package (every problem at once, positioned), then runs
lint and the prompt tests (`promptops test`, through the same suite runner).
"""

from __future__ import annotations

from pathlib import Path

from promptops.commands._common import package_dir
from promptops.console import Console
from promptops.pipeline.build import Build


def run(*, path: Path | None, ref: str | None, console: Console) -> int:
    build = Build(package_dir(path), ref, keep_asts=True)
    pkg = build.package
    n = len(pkg.prompts)
    console.info(
        f"{pkg.manifest.name} {pkg.manifest.version}: {n} prompt{'s' if n != 1 else ''}, "
        f"{len(pkg.templates)} template file{'s' if len(pkg.templates) != 1 else ''}: ok"
    )
    from promptops.lint.runner import gate, lint_package

    lint_ok, lint_lines, lint_summary = gate(lint_package(build), console)
    for line in lint_lines:
        console.echo(line, err=True)
    console.info(f"lint: {lint_summary}")
    # --- test: `promptops test` semantics, snapshots included ---
    from promptops.testing.report import text_lines
    from promptops.testing.suite import run_suite

    result = run_suite(build)
    *details, summary = text_lines(result)
    for line in details:
        (console.info if result.ok else lambda t: console.echo(t, err=True))(line)
    console.info(f"tests: {summary}")
    return 0 if result.ok and lint_ok else 1
