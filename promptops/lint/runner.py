"""Lint one package, from the cache when nothing changed: what the command and the gate run.

Lint is handed what it checks (a :class:`Subject`: a package at a revision, its files and,
on demand, the validated package) and builds nothing itself: ``promptops lint`` and the
gates of ``check``, ``build`` and ``release`` hand it their
:class:`~promptops.pipeline.build.Build`, so a build that lints validates once. The
cached path reads and hashes the files and nothing else; validation and the rules run
only on a miss.
"""

from __future__ import annotations

import gc
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from promptops.console import PLAIN_AUTO, Console
from promptops.lint import cache
from promptops.lint.config import LintSettings, manifest_data, settings
from promptops.lint.output import Report, Texts
from promptops.lint.problem import Finding
from promptops.pipeline.source import CachingSource, Source

if TYPE_CHECKING:
    from promptops.pipeline.bundle_types import Bundle
    from promptops.pipeline.validate import Package, Validated


class Subject(Protocol):
    """What lint reads: a package folder at a revision (a Build is one)."""

    path: Path
    ref: str | None

    @property
    def source(self) -> Source: ...

    @property
    def validated(self) -> Validated: ...


@dataclass(frozen=True)
class Options:
    """What the command line adds to the manifest's ``lint:`` settings."""

    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    strict: bool = False
    base: str | None = None  # the revision 6xx rules compare with
    use_cache: bool = True


@dataclass(frozen=True)
class Linted:
    findings: list[Finding]
    report: Report
    settings: LintSettings
    package: Package | None = None  # what lint validated (None on a cache hit or a failure)
    how: str = "full"  # "cached" | "incremental" (edited prompts re-linted) | "full"

    @property
    def failing(self) -> bool:
        """Errors fail; with ``strict`` warnings fail too; info never fails (nor any gate)."""
        return any(f.level == "error" or (self.settings.strict and f.level == "warning")
                   for f in self.findings)


def lint_package(subject: Subject, opts: Options = Options(), *,
                 build_at: Callable[[str], Bundle] | None = None) -> Linted:
    """Lint ``subject``; ``build_at(rev)`` builds the bundle of the base revision the
    settings name, when the package validates and a 6xx rule can use it."""
    source = subject.source
    files = source if isinstance(source, CachingSource) else CachingSource(source)
    conf = settings(manifest_data(files), list(opts.select), list(opts.ignore),
                    strict=opts.strict, base=opts.base)
    where = cache.cache_dir(subject.path)
    ids = cache.blobs(files, where) if opts.use_cache else {}
    key = cache.package_key(files, conf, where, ids) if opts.use_cache else ""
    found = cache.load(where, key) if opts.use_cache else None
    package = None
    how = "cached" if found is not None else "full"
    if found is None and opts.use_cache and conf.base is None:
        found = _incremental(files, conf, where, ids)
        if found is not None:
            how = "incremental"
            cache.store(where, key, found)
    if found is None:
        from promptops.lint.engine import lint_source

        files.prefetch()
        base: Callable[[], Bundle] | None = None
        if build_at is not None and conf.base is not None:
            base = partial(build_at, conf.base)
        with rarer_collections():
            validated = subject.validated if files is source else None
            result = lint_source(files, conf, base=base, validated=validated)
        found, package = result.findings, result.package
        if opts.use_cache:
            cache.store(where, key, found)
            if result.deps is not None and result.names is not None:
                cache.store_last(where, conf, {"blobs": ids, "findings": found,
                                               "deps": result.deps, "names": result.names})
    def read(path: str) -> str:
        try:
            return files.read(path).decode("utf-8", "replace")
        except FileNotFoundError:
            return ""

    texts = Texts(read)
    folder = subject.path
    display = str(folder)
    if folder.is_absolute() and folder.is_relative_to(Path.cwd()):
        display = os.path.relpath(folder, Path.cwd())
    listed = conf.enabled if opts.select else frozenset()
    return Linted(found, Report(files.label, files.origin.path, display, texts, listed), conf,
                  package, how)


@contextmanager
def rarer_collections() -> Iterator[None]:
    """Cyclic garbage collection a thirtieth as often while a package is validated and linted.

    Validating and linting 10,000 prompts allocates millions of objects that live to the end
    (models, ASTs, findings) and almost no cycles: at CPython's default threshold (700
    allocations) the collections that keep re-scanning them cost a fifth of a cold lint
    (0.75 s of 4 s CPU), for the same peak memory. The threshold belongs to the process, so
    only the main thread changes it (a command; a background thread of serve's is left
    alone, so two runs never restore each other's value) and it is restored however the
    run ends.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = gc.get_threshold()
    gc.set_threshold(max(old[0], 20_000), *old[1:])
    try:
        yield
    finally:
        gc.set_threshold(*old)


def _incremental(files: CachingSource, conf: LintSettings, where: Path,
                 ids: dict[str, str]) -> list[Finding] | None:
    """The findings after an edit from the last full record, when that is exact; else None."""
    last = cache.load_last(where, conf)
    if last is None:
        return None
    from promptops.lint.engine import lint_source
    from promptops.lint.incremental import relint

    found = relint(files, ids, last, lambda subset: lint_source(subset, conf))
    if found is not None:
        cache.store_last(where, conf, {**last, "blobs": ids, "findings": found})
    return found


def gate(linted: Linted, console: Console = PLAIN_AUTO) -> tuple[bool, list[str], str]:
    """For check, build and release: (passes?, finding lines, summary line)."""
    from promptops.lint.output.text import render, summary

    lines = render(linted.findings, linted.report, console).splitlines()[:-1]
    return not linted.failing, lines, summary(linted.findings)


def refusal(subject: Subject) -> str | None:
    """Why a commit must not be built or served (lint errors), or None: `build`'s lint gate
    as one sentence, for `serve` (which keeps the last good set and logs this)."""
    ok, lines, summary = gate(lint_package(subject))
    if ok:
        return None
    shown = "\n".join(lines[:20]) + (f"\n... and {len(lines) - 20} more" if len(lines) > 20
                                     else "")
    return f"lint fails ({summary}); `promptops build` refuses it too:\n{shown}"
