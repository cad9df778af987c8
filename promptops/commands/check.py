"""`promptops check`: the aggregate gate a user and CI run.

It validates the package (every problem at once, positioned), then runs lint and the prompt
tests (`promptops test`, through the same suite runner). A file that does not load does not
stop it: its problems are listed, and lint and the tests still run on every prompt that
loads (issue 15), so one broken file never hides what is wrong or right elsewhere. Exit 1
whenever anything failed.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from promptops.commands._common import package_dir
from promptops.console import Console
from promptops.pipeline.build import Build
from promptops.pipeline.source import CachingSource

_PROMPT = re.compile(r"^prompt:\s*['\"]?([^'\"\s#]+)", re.M)


def _orphan_tests(source: CachingSource, loaded: set[str]) -> list[str]:
    """Test files of prompts that did not load: their cases cannot run (`promptops test` on
    the fixed package runs them)."""
    out = []
    for path in source.files():
        if not (path.startswith("tests/") and path.endswith(".test.yaml")):
            continue
        try:
            text = source.read(path).decode("utf-8", "replace")
        except FileNotFoundError:  # refused (a link out of the package): the test run says so
            continue
        m = _PROMPT.search(text)
        if m is not None and m.group(1) not in loaded:
            out.append(path)
    return out


def run(*, path: Path | None, ref: str | None, console: Console) -> int:
    build = Build(package_dir(path), ref, keep_asts=True)
    with console.status("check: loading the package"):
        validated = build.validated
    pkg = validated.package
    for p in validated.problems:
        where = console.style(f"{p.path}:{p.line}:{p.col}", bold=True)
        console.echo(f"{where}: {p.message}", err=True)
    if validated.problems:
        n = len(validated.problems)
        console.echo(f"{n} problem{'s' if n != 1 else ''} found", err=True)
    if pkg is None:
        return 1
    n = len(pkg.prompts)
    verdict = "ok" if validated.complete else "the rest is checked below"
    console.info(
        f"{pkg.manifest.name} {pkg.manifest.version}: {n} prompt{'s' if n != 1 else ''}, "
        f"{len(pkg.templates)} template file{'s' if len(pkg.templates) != 1 else ''}: {verdict}"
    )
    from promptops.lint.runner import gate, lint_package

    with console.status("check: lint"):
        linted = lint_package(build)
    if not validated.complete:  # the load problems were listed above, once
        listed = {(p.path, p.line, p.col, p.message) for p in validated.problems}
        linted = dataclasses.replace(linted, findings=[
            f for f in linted.findings if (f.path, f.line, f.col, f.message) not in listed])
    lint_ok, lint_lines, lint_summary = gate(linted, console)
    for line in lint_lines:
        console.echo(line, err=True)
    console.info(f"lint: {lint_summary}")
    # --- test: `promptops test` semantics, snapshots included ---
    from promptops.testing.report import text_lines
    from promptops.testing.suite import run_suite

    if not validated.complete:
        hidden = _orphan_tests(build.source, {p.name for p in pkg.prompts})
        partial = Build(build.path, ref, memo=build.memo, index=build.index,
                        source=build.source)
        # the prompts that loaded, tested as they are
        partial.__dict__["package"] = dataclasses.replace(
            pkg, files=tuple(f for f in pkg.files if f not in hidden))
        if hidden:
            k = len(hidden)
            console.info(f"tests: {k} test file{'s' if k != 1 else ''} of prompts that do not "
                         "load: not run")
        build = partial
    with console.progress("check: tests", "cases") as progress:
        result = run_suite(build, progress=progress)
    *details, summary = text_lines(result)
    for line in details:
        (console.info if result.ok else lambda t: console.echo(t, err=True))(line)
    console.info(f"tests: {summary}")
    return 0 if result.ok and lint_ok and validated.complete else 1
