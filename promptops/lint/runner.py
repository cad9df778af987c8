"""Lint one package, from the cache when nothing changed: what the command and the gate run.

Lint is handed what it checks (a :class:`Subject`: a package at a revision, its files and,
on demand, the validated package) and builds nothing itself: ``promptops lint`` and the
gates of ``check``, ``build`` and ``release`` hand it their
:class:`~promptops.pipeline.build.Build`, so a build that lints validates once. The
cached path reads and hashes the files and nothing else; validation and the rules run
only on a miss.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from promptops.console import PLAIN_AUTO, Console
from promptops.lint import cache
from promptops.lint.config import manifest_data, settings
from promptops.lint.output import Report, Texts
from promptops.lint.problem import Finding
from promptops.lint.settings import LintSettings
from promptops.pipeline import collector
from promptops.pipeline.source import CachingSource, Source, cache_dir

if TYPE_CHECKING:
    from promptops.lint.halves import Warm
    from promptops.lint.readers import Readers
    from promptops.pipeline.bundle_types import Bundle
    from promptops.pipeline.templates import TemplateIndex
    from promptops.pipeline.validate import Package, Validated


class Subject(Protocol):
    """What lint reads: a package folder at a revision (a Build is one)."""

    path: Path
    ref: str | None

    @property
    def source(self) -> Source: ...

    @property
    def validated(self) -> Validated: ...

    @property
    def index(self) -> TemplateIndex:
        """The template parser ``validated`` reads through (and its memo)."""
        ...


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
    record: cache.Record | None = None  # what a full run stored for the next incremental one

    @property
    def failing(self) -> bool:
        """Errors fail; with ``strict`` warnings fail too; info never fails (nor any gate)."""
        return any(f.level == "error" or (self.settings.strict and f.level == "warning")
                   for f in self.findings)


def lint_package(subject: Subject, opts: Options = Options(), *,
                 build_at: Callable[[str], Bundle] | None = None) -> Linted:
    """Lint ``subject``; ``build_at(rev)`` builds the bundle of the base revision the
    settings name, when the package validates and a 6xx rule can use it."""
    with collector.paused():  # why: promptops/pipeline/collector.py
        return _lint_package(subject, opts, build_at)


def _lint_package(subject: Subject, opts: Options,
                  build_at: Callable[[str], Bundle] | None) -> Linted:
    source = subject.source
    files = source if isinstance(source, CachingSource) else CachingSource(source)
    conf = settings(manifest_data(files), list(opts.select), list(opts.ignore),
                    strict=opts.strict, base=opts.base)
    where = cache_dir(subject.path, "lint")
    ids = cache.blobs(files, where) if opts.use_cache else {}
    key = cache.package_key(files, conf, where, ids) if opts.use_cache else ""
    found = cache.load(where, key) if opts.use_cache else None
    package = None
    record: cache.Record | None = None
    how = "cached" if found is not None else "full"
    if found is None and opts.use_cache and conf.base is None:
        found = _incremental(files, conf, where, subject.path, ids)
        if found is not None:
            how = "incremental"
            cache.store(where, key, found)
    if found is None:
        from promptops.lint.engine import lint_source

        files.prefetch()
        base: Callable[[], Bundle] | None = None
        if build_at is not None and conf.base is not None:
            base = partial(build_at, conf.base)
        validated, warm = _validated(subject, files, conf)
        if warm is None:
            result = lint_source(files, conf, base=base, validated=validated)
            found = result.findings
        else:  # no base revision then (halves.warm): ``base`` is None
            from promptops.lint.halves import finish

            result, found = finish(files, conf, validated, warm)
        package = result.package
        if opts.use_cache:
            cache.store(where, key, found)
            if result.deps is not None and result.names is not None:
                record = {"blobs": ids, "findings": found, "deps": result.deps,
                          "names": result.names, "complete": package is not None}
                cache.store_last(where, conf, subject.path, record)
    return Linted(found, _report(subject, files, conf, opts), conf, package, how, record)


def _validated(subject: Subject, files: CachingSource,
               conf: LintSettings) -> tuple[Validated, Warm | None]:
    """The package validated, after both parts of it were linted on both cores where
    that pays (:mod:`promptops.lint.halves`), with what they computed and found."""
    from promptops.lint.halves import warm
    from promptops.pipeline.templates import TemplateIndex
    from promptops.pipeline.validate import validate

    if files is subject.source:  # the subject's own validation (a build that lints)
        # warmed only before the subject validates (a cached property): afterwards the
        # halves would compute again what validation has
        warmed = warm(files, conf, subject.index) if "validated" not in vars(subject) else None
        return subject.validated, warmed
    index = TemplateIndex(keep_asts=True)
    warmed = warm(files, conf, index)
    return validate(files, memo=index.memo, index=index), warmed


def _report(subject: Subject, files: CachingSource, conf: LintSettings,
            opts: Options) -> Report:
    """How findings are shown: the package's label, its files' text, the folder as given."""
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
    return Report(files.label, files.origin.path, display, texts, listed)


def _incremental(files: CachingSource, conf: LintSettings, where: Path, package: Path,
                 ids: dict[str, str]) -> list[Finding] | None:
    """The findings after an edit from the last full record, when that is exact; else None."""
    last = cache.load_last(where, conf, package)
    if last is None:
        return None
    from promptops.lint.engine import lint_source
    from promptops.lint.incremental import relint
    from promptops.lint.registry import RULES

    found = relint(files, ids, last, lambda subset: lint_source(subset, conf), RULES)
    if found is not None:
        cache.store_last(where, conf, package, found.record)
    return None if found is None else found.findings


def gate(linted: Linted, console: Console = PLAIN_AUTO) -> tuple[bool, list[str], str]:
    """For check, build and release: (passes?, finding lines, summary line)."""
    from promptops.lint.output.text import render, summary

    lines = render(linted.findings, linted.report, console).splitlines()[:-1]
    return not linted.failing, lines, summary(linted.findings)


def refusal(subject: Subject) -> str | None:
    """Why a commit must not be built or served (lint errors), or None: `build`'s lint gate
    as one sentence, for `serve` (which keeps the last good set and logs this)."""
    return _refused(lint_package(subject))


class FollowGate:
    """:func:`refusal` for a process that lints commit after commit: ``promptops serve``
    following HEAD. The findings are the same (each commit's, exactly: an incremental run
    only where :mod:`promptops.lint.incremental` proves it exact, a full run otherwise),
    but the last record stays in memory instead of a round trip through
    ``.git/promptops/lint`` per commit: at 10,000 prompts reading, keying and writing the
    record cost 0.3 s of a commit's 0.45 s. The cache is still written, by :meth:`flush`,
    which serve calls once the commit has reached its clients. One record a package folder:
    a serve of 100 packages keeps each one's, so a commit re-lints what it changed in
    whichever package it touched (one record for all re-linted that package in full)."""

    def __init__(self) -> None:
        # by package folder: settings key, cache folder, the last record
        self._last: dict[Path, tuple[str, Path, cache.Record]] = {}
        # by package folder: who reads what in its last record (promptops.lint.readers),
        # made by the first relint and patched by the next ones, never walked again
        self._readers: dict[Path, tuple[cache.Record, Readers]] = {}
        self._pending: dict[Path, Callable[[], None]] = {}

    def __call__(self, subject: Subject) -> str | None:
        with collector.paused():
            return _refused(self._lint(subject))

    def _lint(self, subject: Subject) -> Linted:
        source = subject.source
        files = source if isinstance(source, CachingSource) else CachingSource(source)
        conf = settings(manifest_data(files), [], [], strict=False, base=None)
        where = cache_dir(subject.path, "lint")
        key = cache.settings_key(conf)
        mine = self._last.get(subject.path)
        last = mine[2] if mine is not None and mine[:2] == (key, where) else None
        if conf.base is None:
            ids = cache.blobs(files, where)
            if last is None:
                last = cache.load_last(where, conf, subject.path)
            if last is not None:
                from promptops.lint.engine import lint_source
                from promptops.lint.incremental import relint
                from promptops.lint.registry import RULES

                readers = self._readers_of(subject.path, last)
                found = relint(files, ids, last, lambda subset: lint_source(subset, conf), RULES,
                               readers)
                if found is not None:
                    self._readers[subject.path] = (found.record, readers.patched(
                        (last["deps"], last["names"]),
                        (found.record["deps"], found.record["names"]), found.touched))
                    self._keep(subject.path, key, where, found.record, conf, files, ids)
                    return Linted(found.findings, _report(subject, files, conf, Options()), conf,
                                  None, "incremental")
        self.flush()  # a full run reads the cache: what is pending goes first
        linted = lint_package(subject)
        if linted.record is not None:
            self._last[subject.path] = (key, where, linted.record)
            self._readers_of(subject.path, linted.record)  # here, not on the next commit
        else:
            self._last.pop(subject.path, None)
        return linted

    def _readers_of(self, package: Path, last: cache.Record) -> Readers:
        """Who reads what in ``last``: kept from the commit that made it, else made now
        (a relint that fails leaves the kept map as it was: the record did not change)."""
        from promptops.lint.readers import Readers

        kept = self._readers.get(package)
        if kept is not None and kept[0] is last:
            return kept[1]
        made = Readers(last["deps"], last["names"]).ordered()
        self._readers[package] = (last, made)
        return made

    def prepare(self, subject: Subject) -> None:
        """The last record of ``subject``'s package read now, not by the next commit's
        relint (21 MB, 0.25 s at 100,000 prompts: serve's warm-up). Any record is as good a
        base as the newest: a relint compares it with the commit's own blobs."""
        source = subject.source
        files = source if isinstance(source, CachingSource) else CachingSource(source)
        conf = settings(manifest_data(files), [], [], strict=False, base=None)
        where = cache_dir(subject.path, "lint")
        key = cache.settings_key(conf)
        mine = self._last.get(subject.path)
        if conf.base is None and (mine is None or mine[:2] != (key, where)):
            last = cache.load_last(where, conf, subject.path)
            if last is not None:
                self._last[subject.path] = (key, where, last)
                self._readers_of(subject.path, last)

    def _keep(self, package: Path, key: str, where: Path, record: cache.Record,
              conf: LintSettings, files: CachingSource, ids: dict[str, str]) -> None:
        """``record`` for the package's next commit, and for the cache once :meth:`flush`
        runs."""
        self._last[package] = (key, where, record)

        def write() -> None:
            cache.store_last(where, conf, package, record)
            cache.store(where, cache.package_key(files, conf, where, ids), record["findings"])

        self._pending[package] = write  # only each package's newest record matters

    def flush(self) -> None:
        """Write what the last incremental runs found into the lint cache (for `promptops
        lint` and the next serve), off the path from a commit to its clients."""
        pending, self._pending = self._pending, {}
        for write in pending.values():
            write()


def _refused(linted: Linted) -> str | None:
    ok, _, summary = gate(linted)
    if ok:
        return None
    # The errors are why: they come first, each with its excerpt (three lines a finding).
    errors = [f for f in linted.findings if f.level == "error"]
    lines = gate(Linted(errors, linted.report, linted.settings))[1]
    shown = "\n".join(lines[:30]) + (f"\n... and {len(lines) - 30} more lines"
                                     if len(lines) > 30 else "")
    return f"lint fails ({summary}); `promptops build` refuses it too:\n{shown}"


# Declarations that contradict each other: a default its own enum or pattern refuses.
# Serve's gate (``refusal``) refuses the package for them; `render` and `test` would
# otherwise render the default and pass, so the author learned it only when the server
# would not start. They run these rules and refuse alike (``contradictions``).
CONTRADICTIONS = ("PO204", "PO205")


def contradictions(subject: Subject, console: Console = PLAIN_AUTO) -> str | None:
    """The package's contradicting declarations as lint prints them (the lines `serve`,
    `build` and `check` show), or None; honours the manifest's ``lint:`` settings as the
    gate does."""
    linted = lint_package(subject, Options(select=CONTRADICTIONS))
    errors = [f for f in linted.findings if f.level == "error"]
    if not errors:
        return None
    lines = gate(Linted(errors, linted.report, linted.settings), console)[1]
    return "\n".join(lines) + (
        "\n`promptops serve`, `build` and `check` refuse this package until it is fixed")
