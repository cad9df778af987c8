"""`promptops lint`: run the rules, print findings, optionally fix what is safe to fix.

Exit 0 when clean (warnings allowed unless --strict), 1 with findings, 2 for a
configuration error (an unknown rule code anywhere). The cached path reads and hashes
the files and nothing else; the engine (pydantic, Jinja) is imported only on a miss.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from promptops.commands._common import package_dir
from promptops.commands.choices import LintFormat
from promptops.console import Console
from promptops.errors import PackageError, UsageError
from promptops.lint.output import Report
from promptops.lint.problem import Finding
from promptops.lint.runner import Linted, lint_package
from promptops.lint.runner import Options as LintOptions

if TYPE_CHECKING:
    from promptops.commands._watch import OnError
    from promptops.pipeline.bundle_types import Bundle
    from promptops.pipeline.source import Source
    from promptops.pipeline.validate import Package


@dataclass(frozen=True)
class Options:
    """What one ``promptops lint`` run asks for besides the package folder."""

    ref: str | None = None
    fmt: LintFormat = LintFormat.text
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    fix: bool = False
    diff: bool = False
    unsafe_fixes: bool = False
    strict: bool = False
    base: str | None = None
    use_cache: bool = True


def lint(folder: Path, opts: Options) -> Linted:
    """Lint one package (from the cache when nothing changed); no printing.

    The cycle collector stays paused until the build (its validated package, memo and
    template ASTs) is freed, by refcounting inside the pause, as `build` frees its own: a
    pause that ended with them alive let the next allocation's pass walk all of them, and
    find nothing (0.44 s of CPU after a cold lint of 10,000 prompts where no text repeats,
    docs/benchmarks.md, session 12). What is returned holds findings, not the package."""
    from promptops.pipeline import collector
    from promptops.pipeline.build import Build

    with collector.paused():
        build = Build(folder, opts.ref, keep_asts=True)
        linted = lint_package(build, LintOptions(select=opts.select, ignore=opts.ignore,
                                                 strict=opts.strict, base=opts.base,
                                                 use_cache=opts.use_cache),
                              build_at=lambda rev: Build(folder, rev).bundle)
        del build
        linted = replace(linted, package=None)
    return linted


def run(*, path: Path | None, opts: Options, console: Console) -> int:
    if (opts.fix or opts.diff) and opts.ref is not None:
        raise UsageError("--fix and --diff change the working tree; they cannot take --ref")
    folder = package_dir(path)
    with console.status("lint: checking the package"):
        linted = lint(folder, opts)
    findings = linted.findings
    if opts.fix or opts.diff:
        from promptops.lint import fix, proof
        from promptops.pipeline.source import open_source

        candidates = fix.candidates(folder, findings)
        source = open_source(folder, None)
        refused: list[proof.Refusal] = []
        if opts.unsafe_fixes:
            changes = {path: texts["*"] for path, texts in candidates.items()}
            shown = proof.rendered_diff(source, changes, _samples) if changes else ""
            if shown:
                console.info("these fixes change what the package serves:\n"
                             + shown.rstrip("\n"))
        elif candidates:
            changes, refused = proof.prove(source, candidates, _samples)
        else:
            changes = {}
        for refusal in refused:
            console.info(str(refusal))
        if opts.diff:
            console.echo(fix.unified(folder, changes).rstrip("\n"))
        if opts.fix and changes:
            fix.apply(folder, changes)
            console.info(f"fixed {len(changes)} file{'s' if len(changes) != 1 else ''}")
            linted = lint(folder, opts)
        if opts.diff and not opts.fix:
            return 1 if changes or linted.failing else 0
    console.echo(_render(linted.findings, linted.report, opts.fmt, console))
    return 1 if linted.failing else 0


def _samples(package: Package, bundle: Bundle, source: Source) -> list[
        tuple[str, str, dict[str, str]]]:
    """Every argument sample the package has: its test cases and each prompt's smoke case
    (what the fix proof renders before and after)."""
    from promptops.testing.cases import smoke_case
    from promptops.testing.suite import all_cases

    try:
        cases = all_cases(package, source, bundle)
    except PackageError:  # a test file that does not load (`promptops test` reports it)
        cases = [smoke_case(p) for p in bundle["prompts"]]
    return [(c.prompt, "smoke" if c.smoke else f"{c.path}:{c.line}",
             {k: str(v) for k, v in c.arguments.items()}) for c in cases]


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


def watch(*, path: Path | None, opts: Options, console: Console, on_error: OnError) -> int:
    """``promptops lint --watch``: lint, then again after every save.

    Each run goes through lint's cache, whose incremental path re-checks only the prompts
    that read a saved file (promptops/lint/incremental.py) and gives exactly what a full
    run would; the whole current report is printed each time (a fix elsewhere can clear
    a cross-file finding), under a line naming the saved files and how the run was made.
    --fix, --diff and --ref are refused: a watch must not write what it watches.
    """
    from promptops.commands._watch import follow

    if opts.fix or opts.diff or opts.ref is not None:
        raise UsageError("--watch lints the working tree as it is saved; it cannot be "
                         "combined with --fix, --diff or --ref")
    folder = package_dir(path)

    def once(saved: set[str] | None) -> None:
        linted = lint(folder, opts)
        if saved is not None:
            console.info({"cached": "nothing that lint reads changed",
                          "incremental": "re-linted the prompts that read the saved files",
                          "full": "re-linted the package"}.get(linted.how, linted.how))
        console.echo(_render(linted.findings, linted.report, opts.fmt, console))

    return follow(folder, once, console, on_error)
