"""`promptops lint`: run the rules, print findings, optionally fix what is safe to fix.

Exit 0 when clean (warnings allowed unless --strict), 1 with findings, 2 for a
configuration error (an unknown rule code anywhere). The cached path reads and hashes
the files and nothing else; the engine (pydantic, Jinja) is imported only on a miss.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from promptops.commands._common import package_dir
from promptops.commands.choices import LintFormat
from promptops.console import Console
from promptops.errors import UsageError
from promptops.lint.output import Report
from promptops.lint.problem import Finding
from promptops.lint.runner import Linted, lint_package
from promptops.lint.runner import Options as LintOptions


@dataclass(frozen=True)
class Options:
    """What one ``promptops lint`` run asks for besides the package folder."""

    ref: str | None = None
    fmt: LintFormat = LintFormat.text
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    fix: bool = False
    diff: bool = False
    strict: bool = False
    base: str | None = None
    use_cache: bool = True


def lint(folder: Path, opts: Options) -> Linted:
    """Lint one package (from the cache when nothing changed); no printing."""
    from promptops.pipeline.build import Build

    build = Build(folder, opts.ref, keep_asts=True)
    return lint_package(build, LintOptions(select=opts.select, ignore=opts.ignore,
                                           strict=opts.strict, base=opts.base,
                                           use_cache=opts.use_cache),
                        build_at=lambda rev: Build(folder, rev).bundle)


def run(*, path: Path | None, opts: Options, console: Console) -> int:
    if (opts.fix or opts.diff) and opts.ref is not None:
        raise UsageError("--fix and --diff change the working tree; they cannot take --ref")
    folder = package_dir(path)
    linted = lint(folder, opts)
    findings = linted.findings
    if opts.fix or opts.diff:
        from promptops.lint import fix

        changes = fix.planned(folder, findings)
        if opts.diff:
            console.echo(fix.unified(changes).rstrip("\n"))
        if opts.fix and changes:
            fix.apply(folder, changes)
            console.info(f"fixed {len(changes)} file{'s' if len(changes) != 1 else ''}")
            linted = lint(folder, opts)
        if opts.diff and not opts.fix:
            return 1 if changes or linted.failing else 0
    console.echo(_render(linted.findings, linted.report, opts.fmt, console))
    return 1 if linted.failing else 0


def _render(findings: list[Finding], report: Report, fmt: LintFormat, console: Console) -> str:
    if fmt is LintFormat.text:
        from promptops.lint.output import text

        return text.render(findings, report, console)
    if fmt is LintFormat.json:
        from promptops.lint.output import json as out
    elif fmt is LintFormat.github:
        from promptops.lint.output import github as out  # type: ignore[no-redef]
    else:
        from promptops.lint.output import sarif as out  # type: ignore[no-redef]
    return out.render(findings, report)
