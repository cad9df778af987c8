"""Runs the rules: load the package, turn load problems into PO1xx-3xx findings, then
run every enabled rule on what could be loaded.

A package that does not validate still gets linted as far as possible: the prompt
files that carry load problems are set aside and the rest is loaded again (a
*partial* package), so one broken file never hides findings in the others. Rules
that need the whole package (unused partials, 6xx) run only when it all loads.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from promptops.errors import PackageError, Problem
from promptops.lint.config import LintSettings
from promptops.lint.context import LintContext
from promptops.lint.problem import Finding
from promptops.lint.registry import RULES, Rule, resolve
from promptops.package import Package, load_package
from promptops.sources import MANIFEST, REFUSED, Origin, Source

_DISABLE = re.compile(r"promptops:\s*disable=([A-Za-z0-9_,\- ]+)")


def classify(problem: Problem) -> str:
    """The rule code a loader problem belongs to (the loader's messages are stable)."""
    msg = problem.message
    if msg.startswith("invalid YAML") or msg == "file is not valid UTF-8":
        return "PO101"
    if msg.startswith("template: "):
        return "PO104" if "unknown tag" in msg or "No filter named" in msg else "PO103"
    if "is already used by" in msg:
        return "PO106"
    if any(refused.why in msg for refused in REFUSED):  # a path the package may not name
        return "PO304" if msg.startswith("template ") else "PO306"
    if msg.startswith("dynamic include") or (msg.startswith("template ") and "not found" in msg):
        return "PO301"
    if msg.startswith("include "):
        return "PO304"
    if msg.startswith("file ") and "not found in the package" in msg:
        return "PO306"
    if msg.endswith("is outside the package"):
        return "PO306"
    return "PO102"


class _Without:
    """A source minus some files: the partial package of a package that fails to load."""

    def __init__(self, inner: Source, skip: set[str]) -> None:
        self.inner, self.skip = inner, skip
        self.origin: Origin = inner.origin
        self.label = inner.label

    def files(self) -> list[str]:
        return [f for f in self.inner.files() if f not in self.skip]

    def read(self, path: str) -> bytes:
        return self.inner.read(path)


class _RecordingParser:
    """Stands in for the loader's Jinja parser while lint loads, keeping each AST.

    The loader parses every template to validate it and throws the AST away; parsing
    is the largest cost of linting 10,000 prompts, so lint keeps what the loader
    parsed instead of parsing everything twice. Same environment settings, same ASTs.
    """

    def __init__(self, inner: Any, asts: dict[str, Any]) -> None:
        self.inner, self.asts = inner, asts

    def parse(self, source: str, *args: Any, **kwargs: Any) -> Any:
        ast = self.inner.parse(source, *args, **kwargs)
        self.asts.setdefault(source, ast)
        return ast

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def load(
    source: Source, asts: dict[str, Any] | None = None
) -> tuple[Package | None, bool, list[Problem]]:
    """(package or partial package or None, complete?, every load problem)."""
    from promptops import package as loader_module

    original = getattr(loader_module, "_parser", None)
    if original is not None and asts is not None:
        loader_module._parser = _RecordingParser(original, asts)  # type: ignore[assignment]
    try:
        return _load(source)
    finally:
        if original is not None:
            loader_module._parser = original


def _load(source: Source) -> tuple[Package | None, bool, list[Problem]]:
    try:
        return load_package(source), True, []
    except PackageError as exc:
        problems = list(exc.problems)
    skip: set[str] = set()
    current = problems
    for _ in range(3):
        broken = {p.path for p in current if p.path.startswith("prompts/")}
        if not broken or broken <= skip or any(p.path == MANIFEST for p in current):
            break
        skip |= broken
        try:
            return load_package(_Without(source, skip)), False, problems
        except PackageError as exc:
            current = list(exc.problems)
    return None, False, problems


@dataclass(frozen=True)
class Result:
    findings: list[Finding]
    files: dict[str, str]  # path -> text, for excerpts and fingerprints
    package: Package | None = None  # the validated package, when it loaded completely


def run_rules(ctx: LintContext, rules: Iterable[Rule]) -> list[Finding]:
    out: set[Finding] = set()
    for rule in rules:
        if rule.code not in ctx.settings.enabled or not _runnable(rule, ctx):
            continue
        for hit in rule.check(ctx):
            out.add(Finding(hit.path, hit.line, hit.col, rule.code, rule.name, rule.level,
                            hit.message, rule.fixable))
    return sorted(out)


def _runnable(rule: Rule, ctx: LintContext) -> bool:
    if rule.needs in ("raw", "load"):
        return True
    if rule.needs == "package":
        return ctx.package is not None
    if rule.needs == "whole":
        return ctx.complete
    return ctx.complete and ctx.base_bundle is not None  # "base"


def suppressions(ctx: LintContext) -> dict[str, dict[int, set[str]]]:
    """path -> line -> codes silenced there; an unknown code is a configuration error."""
    out: dict[str, dict[int, set[str]]] = {}
    for path in ctx.text_files:
        text = ctx.text(path)
        if not text or "promptops:" not in text:
            continue
        for n, line in enumerate(text.splitlines(), 1):
            m = _DISABLE.search(line)
            if m:
                codes = resolve(m.group(1).split(","), f"{path}:{n}")
                out.setdefault(path, {}).setdefault(n, set()).update(codes)
    return out


def lint_source(source: Source, settings: LintSettings, package_dir: Path | None) -> Result:
    asts: dict[str, Any] = {}
    package, complete, problems = load(source, asts)
    base_bundle = None
    if settings.base is not None and complete and package_dir is not None:
        from promptops.pipeline import bundle_at

        base_bundle = bundle_at(package_dir, settings.base)
    ctx = LintContext(source, settings, package, complete,
                      [(classify(p), p) for p in problems], base_bundle, asts)
    silenced = suppressions(ctx)
    findings = [
        f for f in run_rules(ctx, RULES)
        if f.code not in silenced.get(f.path, {}).get(f.line, set())
        and f.code not in silenced.get(f.path, {}).get(f.line - 1, set())
    ]
    texts = {f.path: ctx.text(f.path) or "" for f in findings}
    return Result(findings, texts, package if complete else None)
