"""`promptops lint`: run the rules, print findings, optionally fix what is safe to fix.

Exit 0 when clean (warnings allowed unless --strict), 1 with findings, 2 for a
configuration error (an unknown rule code anywhere). The cached path reads and hashes
the files and nothing else; the engine (pydantic, Jinja) is imported only on a miss.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from promptops.commands._common import package_dir
from promptops.console import echo, info
from promptops.errors import UsageError
from promptops.lint import cache
from promptops.lint.config import LintSettings, settings
from promptops.lint.output import Report
from promptops.lint.problem import Finding
from promptops.pipeline.source import MANIFEST, open_source

if TYPE_CHECKING:
    from promptops.pipeline.validate import Package

FORMATS = ("text", "json", "github", "sarif")


@dataclass(frozen=True)
class Options:
    ref: str | None = None
    fmt: str = "text"
    select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    fix: bool = False
    diff: bool = False
    strict: bool = False
    base: str | None = None
    use_cache: bool = True


def _manifest_data(source: cache.MemoSource) -> object:
    """The manifest's plain data, leniently: a broken manifest is reported as a finding
    and lint runs with the defaults (fast YAML path only; positions are not needed)."""
    from promptops.pipeline.yamlio import fast as fastyaml

    try:
        return fastyaml.load(source.read(MANIFEST).decode("utf-8-sig"))
    except Exception:
        return None


def findings_for(folder: Path, opts: Options) -> tuple[list[Finding], Report, LintSettings]:
    """Lint one package (from the cache when nothing changed); no printing."""
    found, report, conf, _ = _findings(folder, opts)
    return found, report, conf


def _findings(
    folder: Path, opts: Options
) -> tuple[list[Finding], Report, LintSettings, Package | None]:
    """findings_for, plus the package lint loaded (None on a cache hit or a broken load)."""
    loaded: Package | None = None
    source = cache.MemoSource(open_source(folder, opts.ref))
    conf = settings(_manifest_data(source), opts.select, opts.ignore, strict=opts.strict,
                    base=opts.base)
    where = cache.cache_dir(folder)
    key = cache.package_key(source, conf, where) if opts.use_cache else ""
    found = cache.load(where, key) if opts.use_cache else None
    if found is None:
        from promptops.lint.engine import lint_source

        source.prefetch()

        result = lint_source(source, conf, folder)
        found, loaded = result.findings, result.package
        if opts.use_cache:
            cache.store(where, key, found)
    texts = {}
    for path in {f.path for f in found}:
        try:
            texts[path] = source.read(path).decode("utf-8", "replace")
        except FileNotFoundError:
            texts[path] = ""
    display = str(folder)
    if folder.is_absolute() and folder.is_relative_to(Path.cwd()):
        display = os.path.relpath(folder, Path.cwd())
    report = Report(source.label, source.origin.path, display, texts)
    return found, report, conf, loaded


def failing(findings: list[Finding], strict: bool) -> bool:
    return any(f.level == "error" or strict for f in findings)


def run(path: Path | None, opts: Options) -> int:
    if opts.fmt not in FORMATS:
        raise UsageError(f"unknown format {opts.fmt!r}; use one of {', '.join(FORMATS)}")
    if (opts.fix or opts.diff) and opts.ref is not None:
        raise UsageError("--fix and --diff change the working tree; they cannot take --ref")
    folder = package_dir(path)
    findings, report, conf = findings_for(folder, opts)
    if opts.fix or opts.diff:
        from promptops.lint import fix

        changes = fix.planned(folder, findings)
        if opts.diff:
            echo(fix.unified(changes).rstrip("\n"))
        if opts.fix and changes:
            fix.apply(folder, changes)
            info(f"fixed {len(changes)} file{'s' if len(changes) != 1 else ''}")
            findings, report, conf = findings_for(folder, opts)
        if opts.diff and not opts.fix:
            return 1 if changes or failing(findings, conf.strict) else 0
    echo(_render(findings, report, opts.fmt))
    return 1 if failing(findings, conf.strict) else 0


def _render(findings: list[Finding], report: Report, fmt: str) -> str:
    if fmt == "json":
        from promptops.lint.output import json as out
    elif fmt == "github":
        from promptops.lint.output import github as out  # type: ignore[no-redef]
    elif fmt == "sarif":
        from promptops.lint.output import sarif as out  # type: ignore[no-redef]
    else:
        from promptops.lint.output import text as out  # type: ignore[no-redef]
    return out.render(findings, report)


def lint_gate(folder: Path, ref: str | None) -> tuple[bool, list[str], str]:
    """For check, build and release: (passes?, finding lines, summary line)."""
    ok, lines, summary, _ = lint_gate_loading(folder, ref)
    return ok, lines, summary


def lint_gate_loading(
    folder: Path, ref: str | None
) -> tuple[bool, list[str], str, Package | None]:
    """lint_gate, plus the package it loaded, so `build` need not load it a second time."""
    from promptops.lint.output.text import render, summary

    findings, report, conf, package = _findings(folder, Options(ref=ref))
    lines = render(findings, report).splitlines()[:-1]
    return not failing(findings, conf.strict), lines, summary(findings), package
