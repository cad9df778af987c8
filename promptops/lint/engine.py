"""Runs the rules: validate the package, then run every enabled rule on what validated.

Validation reports every problem with its rule code (PO1xx-3xx), which the loader-side
rules pass on as findings. A package that does not validate is still linted as far as
possible: validation hands back the partial package of the prompt files without a
problem, so one broken file never hides findings in the others. Rules that need the
whole package (unused partials, 6xx) run only when it all validates.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from promptops.lint.context import LintContext, Tables
from promptops.lint.problem import ORDER, Finding
from promptops.lint.registry import RULES, Rule, resolve
from promptops.lint.settings import LintSettings
from promptops.pipeline.bundle_types import Bundle
from promptops.pipeline.source import Source
from promptops.pipeline.templates import TemplateIndex
from promptops.pipeline.validate import Package, Validated, validate

_DISABLE = re.compile(r"promptops:\s*disable=([A-Za-z0-9_,\- ]+)")
Silenced = dict[str, dict[int, set[str]]]  # path -> line -> the codes silenced there


@dataclass(frozen=True)
class Result:
    findings: list[Finding]
    files: dict[str, str]  # path -> text, for excerpts and fingerprints
    package: Package | None = None  # the validated package, when it loaded completely
    # prompt file -> every other file it reads (templates reached, resources), and its name:
    # what an incremental run needs to know which findings an edit can change
    deps: dict[str, list[str]] | None = None
    names: dict[str, str] | None = None
    silenced: Silenced | None = None  # the suppressions it applied (:func:`suppressions`)


def run_rules(ctx: LintContext, rules: Iterable[Rule]) -> list[Finding]:
    out: set[Finding] = set()
    for rule in rules:
        if rule.code not in ctx.settings.enabled or not _runnable(rule, ctx):
            continue
        for hit in rule.check(ctx):
            out.add(Finding(hit.path, hit.line, hit.col, rule.code, rule.name, rule.level,
                            hit.message, rule.fixable))
    return sorted(out, key=ORDER)


def _runnable(rule: Rule, ctx: LintContext) -> bool:
    if rule.needs in ("raw", "load"):
        return True
    if rule.needs == "package":
        return ctx.package is not None
    if rule.needs == "whole":
        return ctx.complete
    return ctx.complete and ctx.base_bundle is not None  # "base"


def suppressions(ctx: LintContext) -> Silenced:
    """path -> line -> codes silenced there; an unknown code is a configuration error."""
    out: Silenced = {}
    for path in ctx.text_files:
        text = ctx.text(path)
        if not text or "promptops:" not in text:
            continue  # before the table: its key is the whole file (a hash of every byte)
        for n, listed in ctx.memo("suppressions", text, _disables):
            codes = resolve(listed.split(","), f"{path}:{n}")
            out.setdefault(path, {}).setdefault(n, set()).update(codes)
    return out


def _disables(text: str) -> list[tuple[int, str]]:
    """(line, the codes as written) of each ``promptops: disable=`` comment in ``text``, once
    per distinct text (what they resolve to, or the error naming the file, is per file)."""
    if "promptops:" not in text:
        return []
    found: list[tuple[int, str]] = []
    for n, line in enumerate(text.splitlines(), 1):
        m = _DISABLE.search(line)
        if m:
            found.append((n, m.group(1)))
    return found


def lint_source(source: Source, settings: LintSettings, package_dir: Path | None = None, *,
                base: Callable[[], Bundle] | None = None,
                validated: Validated | None = None, rules: Sequence[Rule] = RULES,
                tables: Tables | None = None, silenced: Silenced | None = None) -> Result:
    """Lint what ``source`` holds. ``base`` builds the bundle of ``settings.base`` (asked
    only when the package validates and a 6xx rule can run); ``validated`` is the package
    as a caller already validated it (keeping its ASTs), else it is validated here;
    ``rules`` is the registry's table (a test adds a rule of its own); ``tables``: the
    answers by text a run on part of the package computed (:mod:`promptops.lint.halves`),
    kept and added to; ``silenced``: the package's :func:`suppressions`, where runs on
    parts of it read every file already (:func:`promptops.lint.halves.finish`)."""
    if validated is None:
        validated = validate(source, index=TemplateIndex(keep_asts=True))
    base_bundle = base() if base is not None and validated.complete else None
    ctx = LintContext(source, settings, validated, base_bundle, tables)
    if silenced is None:
        silenced = suppressions(ctx)
    findings = [
        f for f in run_rules(ctx, rules)
        if f.code not in silenced.get(f.path, {}).get(f.line, set())
        and f.code not in silenced.get(f.path, {}).get(f.line - 1, set())
    ]
    texts = {f.path: ctx.text(f.path) or "" for f in findings}
    deps: dict[str, list[str]] = {}
    names: dict[str, str] = {}
    for prompt in ctx.package.prompts if ctx.package is not None else ():
        files = {path for path, _, _ in ctx.sources(prompt)}
        for msg in prompt.spec.messages:
            for body in (msg.resource, msg.image, msg.audio):
                file = getattr(body, "file", None)
                if isinstance(file, str):
                    files.add(file)
        files.discard(prompt.path)
        deps[prompt.path] = sorted(files)
        names[prompt.path] = prompt.name
    return Result(findings, texts, validated.package if validated.complete else None,
                  deps, names, silenced)
