"""An edited, added or removed prompt re-lints that prompt, not the package.

The cache (promptops.lint.cache) answers an unchanged package; after a change, the last
record says which prompt reads which files. Three kinds of change take a fast path, one
strategy each (:class:`Edited`, :class:`Added`, :class:`Removed`; edits and additions
together too), and each gives exactly what a full run would (its docstring says why;
tests/lint/test_incremental.py, test_incremental_added.py, test_incremental_scope.py);
anything else is a full run.

Which findings can depend on more than the prompts that read a file is the rules' to say,
not this module's: each rule declares its ``SCOPE`` (and ``CYCLE``), the registry carries
it on the :class:`~promptops.lint.registry.Rule` record, and :class:`Scopes` is all this
module knows of the rules (it imports none: an import-linter contract in pyproject.toml).
A new package-scope rule is handled here without a change to this file. What
"package scope" may depend on, the structure these strategies check, is written in the
registry's docstring; two prompt names meet when they fold equal (promptops.pipeline.names).

Additions and edits in one change (a pull of several commits) are the edits first, then
the additions on that result: each step exact, so both are.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from promptops.lint.cache import Record
from promptops.lint.problem import ORDER, Finding
from promptops.lint.readers import Readers
from promptops.lint.shared import settle
from promptops.pipeline.model import PromptFile
from promptops.pipeline.names import fold
from promptops.pipeline.source import MANIFEST, Origin, Source
from promptops.pipeline.validate import Loader

if TYPE_CHECKING:
    from promptops.lint.engine import Result
    from promptops.lint.registry import Rule


class Subset:
    """The manifest, the edited prompts and the files they read: what those prompts see (no
    other file is read, so a one-prompt edit costs one prompt, not a package walk)."""

    def __init__(self, inner: Source, keep: set[str]) -> None:
        self.inner, self.keep = inner, keep
        self.origin: Origin = inner.origin
        self.label = inner.label

    def files(self) -> list[str]:
        return [f for f in self.inner.files() if f in self.keep]

    def read(self, path: str) -> bytes:
        return self.inner.read(path)

    def blob_id(self, path: str) -> str | None:
        return self.inner.blob_id(path)

    def read_ahead(self, paths: list[str]) -> None:
        self.inner.read_ahead(paths)


@dataclass(frozen=True)
class Relinted:
    """The findings after a change, and the record the next incremental run starts from."""

    findings: list[Finding]
    record: Record
    # the prompt files whose reads or name may differ from the last record's (every other
    # prompt's entries are the last record's own objects): what a kept reader map patches
    touched: frozenset[str]


Run = Callable[[Source], "Result"]


@dataclass(frozen=True)
class Scopes:
    """What the rules declare about their reach, by code: the one thing asked of them here."""

    package: frozenset[str]  # SCOPE = "package": findings that depend on other prompts
    cycle: frozenset[str]  # CYCLE: a finding means an include cycle
    first: frozenset[str] = frozenset()  # FIRST: a shared template judged by its first prompt

    @classmethod
    def of(cls, rules: Iterable[Rule]) -> Scopes:
        listed = list(rules)
        return cls(frozenset(r.code for r in listed if r.scope == "package"),
                   frozenset(r.code for r in listed if r.cycle),
                   frozenset(r.code for r in listed if r.first))

    def local(self, finding: Finding) -> bool:
        """Whether re-linting the prompts that read its file re-derives the finding."""
        return finding.code not in self.package

    def any_cycle(self, findings: Iterable[Finding]) -> bool:
        return any(f.code in self.cycle for f in findings)


@dataclass(frozen=True)
class Change:
    """The last record, the package now, and how to lint a part of it."""

    source: Source
    blobs: Mapping[str, str]
    last: Record
    run: Run
    scopes: Scopes
    kept: Readers | None = None  # who reads what in ``last``, when the caller keeps it

    @property
    def deps(self) -> dict[str, list[str]]:
        return self.last["deps"]

    @property
    def old(self) -> list[Finding]:
        return self.last["findings"]

    @cached_property
    def readers(self) -> Readers:
        """Who reads what in the last record: the caller's, or made from the record."""
        return self.kept if self.kept is not None else Readers(self.deps, self.last["names"])

    def subset(self, keep: set[str]) -> Result:
        """A run on ``keep`` alone."""
        return self.run(Subset(self.source, keep))

    def lint(self, keep: set[str]) -> tuple[Result, dict[str, list[str]], dict[str, str]] | None:
        """A run on ``keep`` alone, when what it holds validated completely, with what its
        prompts read and are named."""
        result = self.run(Subset(self.source, keep))
        if result.package is None or result.deps is None or result.names is None:
            return None
        return result, result.deps, result.names


def relint(source: Source, blobs: Mapping[str, str], last: Record, run: Run,
           rules: Iterable[Rule], readers: Readers | None = None) -> Relinted | None:
    """The findings after a change, from ``last`` and a run on the changed prompts alone;
    None when only a full run can give them exactly. ``rules`` are the rules ``run`` runs
    (their declared scopes say which findings a partial run can re-derive); ``readers``,
    who reads what in ``last`` (:mod:`promptops.lint.readers`), when the caller keeps it."""
    old_blobs: dict[str, str] = last["blobs"]
    added = {p for p in blobs if p not in old_blobs}
    removed = {p for p in old_blobs if p not in blobs}
    changed = {p for p, b in blobs.items() if p in old_blobs and old_blobs[p] != b}
    scopes = Scopes.of(rules)
    if removed:
        if added or changed:
            return None
        return Removed(removed).relint(Change(source, blobs, last, run, scopes, readers))
    if not changed:
        return (Added(added).relint(Change(source, blobs, last, run, scopes, readers))
                if added else None)
    failing = {p for p in changed if p in last["deps"] and not _loads(source, p)}
    if failing:  # all of them, alone: a prompt made invalid (what an editor saves mid-edit)
        return Broken(failing).relint(Change(source, blobs, last, run, scopes, readers)) \
            if failing == changed and not added else None
    edited = Edited(changed).relint(Change(source, blobs, last, run, scopes, readers))
    if edited is None:
        return None
    found, now = edited
    # the edits first, on the old file list (what a pull of an edit and an addition is)
    record: Record = {**last, "blobs": {p: blobs[p] for p in old_blobs}, "findings": found,
                      "deps": {**last["deps"], **now}}
    if added:
        more = Added(added).relint(Change(source, blobs, record, run, scopes))
        return None if more is None else Relinted(more.findings, more.record,
                                                  more.touched | now.keys())
    return Relinted(found, {**record, "blobs": dict(blobs)}, frozenset(now))


class Edited:
    """**Edited files** (the same file list).

    The prompts that read a changed file are linted on their own (with every template and
    resource, without the other prompts), and their prompt-scope findings replace the old
    ones on the files only they read; a file no prompt reads any more (an include dropped)
    takes every finding the run gives it, as a removal's orphans do; the files they share
    with unchanged prompts are settled by a few of those when an edited prompt's files
    changed or a shared file has findings (:func:`promptops.lint.shared.settle`);
    package-scope findings elsewhere are kept, which is exact because the structure they
    depend on (names, which file reads which) changes only around the edited prompts, and
    there it is checked. A full run is made when:

    - the manifest or a file no prompt reads changed;
    - an edited prompt's name changed, it reads a file it did not read, or it no longer
      validates (package-scope rules such as duplicate names read names, and a new file
      read can lose its unused-partial finding);
    - a package-scope finding is on an edited prompt or a file it still reads or shares,
      before or after: the record holds which files a prompt reads, not the include
      graph's shape, and an edit can make a chain deeper or close a cycle among the same
      files (include depth and cycles are judged on that shape); or what an edited prompt
      reads changed while a cycle exists anywhere (see Added);
    - the shared files cannot be settled by at most ``WITNESSES`` unchanged prompts;
    - a file no prompt reads any more, when the last run did not validate completely (an
      unloaded prompt file's text, outside the subset, may name it: see :class:`Broken`);
    - a base revision is compared (6xx read the whole bundle; the caller never asks then).
    """

    def __init__(self, changed: set[str]) -> None:
        self.changed = changed

    def relint(self, change: Change) -> tuple[list[Finding], dict[str, list[str]]] | None:
        """The findings after the edits and what each edited prompt reads now; None for a
        full run."""
        affected = self._affected(change)
        if affected is None:
            return None
        reach = {f for p in affected for f in change.deps[p]}
        result = change.subset({MANIFEST} | affected | reach)
        now = self._structure(change, result, affected)
        if now is None:
            return None
        # the files they read that unchanged prompts read too
        shared = {f for f in reach if change.readers.beyond(f, affected)}
        # files no prompt reads now (an include dropped): judged alone, as a removal's orphans
        read_now = {f for files in now.values() for f in files}
        unread = {f for f in reach - shared if f not in change.deps} - read_now
        if unread and not change.last["complete"]:
            return None  # a prompt file that did not load may name it (PO305 reads its text)
        moved = any(now[p] != change.deps[p] for p in affected)
        if not self._judgeable(change, result, (reach | affected) - unread,
                               affected | (reach & read_now), moved):
            return None
        got = self._shared(change, result, affected, shared, now, moved)
        if got is None:
            return None
        return self._merge(change, result, (reach - shared) | affected, unread, shared,
                           got[0]), now

    @staticmethod
    def _merge(change: Change, result: Result, mine: set[str], unread: set[str],
               shared: set[str], settled: set[Finding] | None) -> list[Finding]:
        """The old findings elsewhere, the subset's on ``mine`` (prompt scope) and on what
        nobody reads now (all), and the shared files' (old ones unless ``settled``)."""
        local = change.scopes.local
        kept = [f for f in change.old if f.path not in unread and (
            f.path not in mine or not local(f)) and (settled is None or f.path not in shared)]
        new = [f for f in result.findings
               if f.path in unread or (f.path in mine and local(f))]
        return sorted(set(kept) | set(new) | (settled or set()), key=ORDER)

    @staticmethod
    def _judgeable(change: Change, result: Result, near: set[str], judged: set[str],
                   moved: bool) -> bool:
        """Whether no package-scope finding is on what the edit touches (``near``, before;
        what the subset judges as the package does, after), nor a cycle when files moved.
        A file an edited prompt dropped is not judged by the subset (unused there)."""
        local = change.scopes.local
        if any(f.path in near and not local(f) for f in change.old) or any(
                f.path in judged and not local(f) for f in result.findings):
            return False  # the include graph's shape is not recorded (see the docstring)
        return not (moved and change.scopes.any_cycle((*change.old, *result.findings)))

    @staticmethod
    def _shared(change: Change, result: Result, affected: set[str], shared: set[str],
                now: dict[str, list[str]], moved: bool) -> tuple[set[Finding] | None] | None:
        """The findings on the files the edited prompts share with others, settled when
        what the edited prompts read changed or such a file has findings; ``(None,)`` when
        the old ones stand, None for a full run."""
        local = change.scopes.local
        if not shared or not (moved or any(f.path in shared and local(f)
                                           for f in (*change.old, *result.findings))):
            return (None,)
        settled = settle(change.subset, change.last, change.readers, change.scopes, shared,
                         affected, (result, now))
        return None if settled is None else (settled,)

    def _affected(self, change: Change) -> set[str] | None:
        """The prompts that read a changed file (or are one), when few enough to pay."""
        changed, deps, readers = self.changed, change.deps, change.readers
        if not changed or MANIFEST in changed or any(
                p not in deps and not readers.read(p) for p in changed):
            return None
        # (a walk of every prompt's reads was 35-55 ms of a commit at 100,000 prompts)
        affected = {p for p in changed if p in deps}
        affected.update(p for f in changed for p in readers.readers(f))
        if len(affected) * 2 > len(deps):  # most of the package: a full run is as cheap
            return None
        return affected

    @staticmethod
    def _structure(change: Change, result: Result,
                   affected: set[str]) -> dict[str, list[str]] | None:
        """What each edited prompt reads now, when it kept its name and validated (what it
        reads may shrink: a file it no longer reads is settled as a removal's would be)."""
        names: dict[str, str] = change.last["names"]
        if result.package is None or result.deps is None or result.names is None:
            return None
        if not all(p in result.deps and result.names.get(p) == names[p] for p in affected):
            return None
        reach = {f for p in affected for f in change.deps[p]} | affected
        if any(f not in reach for p in affected for f in result.deps[p]):
            return None  # it reads a file it did not: that file's findings may change too
        return {p: result.deps[p] for p in affected}


class Added:
    """**Added files** (nothing changed or removed: a new prompt, a new partial, a new
    resource; what ``serve`` sees when a commit adds a prompt to a large package).

    The added files are linted on their own with the manifest, the old files they read
    joining them when no old prompt read those; old findings stay. This is exact because,
    when the last run validated completely, no old prompt can read an added file (it would
    have been a missing include or resource, a load problem), so old prompts, the templates
    they reach and their findings are unchanged, and package-scope rules can only gain
    findings on what the added prompts reach. A full run is made when:

    - the last run did not validate completely, or this one does not (a load problem can
      drop the partial package and with it every prompt's findings);
    - an added prompt's name folds onto an old one's (which of the two is the duplicate
      depends on their order), or an added prompt reads an old prompt file;
    - an added prompt reads a file an old prompt reads and that file has findings, before
      or after (as for edits);
    - any include cycle exists (a finding of a ``CYCLE`` rule: include depth is computed
      along paths a cycle cuts short, in the order the prompts are visited);
    - files were also removed in the same change, or more than half the package was added.
    """

    def __init__(self, added: set[str]) -> None:
        self.added = added

    def relint(self, change: Change) -> Relinted | None:
        added, deps = self.added, change.deps
        if not change.last["complete"] or MANIFEST in added or len(added) * 2 > len(deps):
            return None
        keep = {MANIFEST} | added
        got = change.lint(keep)
        if got is None:
            return None  # a load problem in what was added: only a full run places it exactly
        reach = {f for files in got[1].values() for f in files}
        # Old files only added prompts read: judged by the subset alone (as templates now,
        # if they are included), so they join it and their old findings give way. (An old
        # prompt file read so joins as a prompt, whose name then is an old one: full run.)
        joined = {f for f in reach if f in change.blobs and f not in added
                  and not change.readers.read(f)}
        if joined:
            got = change.lint(keep | joined)
            if got is None:
                return None
        result, new_deps, new_names = got
        if not self._apart(change, result, new_names, added | joined, reach):
            return None
        findings = sorted({f for f in change.old if f.path not in joined} | set(result.findings),
                          key=ORDER)
        record = Record(blobs=dict(change.blobs), findings=findings, deps={**deps, **new_deps},
                        names={**change.last["names"], **new_names}, complete=True)
        return Relinted(findings, record, frozenset(new_deps))

    @staticmethod
    def _apart(change: Change, result: Result, new_names: dict[str, str], mine: set[str],
               reach: set[str]) -> bool:
        """Whether the added prompts leave the old ones' findings as they were."""
        folded = {fold(n) for n in change.last["names"].values()}
        if any(fold(n) in folded for n in new_names.values()):
            return False
        before = set(change.old)
        if change.scopes.any_cycle((*change.old, *result.findings)) or any(
                f.path not in mine and f not in before for f in result.findings):
            return False  # a cycle, or a new finding on a file old prompts read too
        shared = {f for f in reach if change.readers.read(f)}
        return not any(f.path in shared for f in change.old)


class Removed:
    """**Removed files** (nothing added or changed).

    A removed prompt's findings go with it, and so do those of files nobody reads; files
    only the removed prompts read are linted on their own (an unused partial now, a plain
    file); files a removed prompt shared with prompts left are settled by a few of those
    (:func:`promptops.lint.shared.settle`: the removed prompt's part of their findings goes).
    A full run is made when the last run did not validate completely, a prompt left reads a
    removed file (a missing include or resource), a removed prompt's name folds onto
    another's, a cycle exists (a finding of a ``CYCLE`` rule), the shared files cannot be
    settled so, or files were also added or edited.
    """

    def __init__(self, removed: set[str], alongside: frozenset[str] = frozenset()) -> None:
        self.removed = removed
        # files linted with the orphans, whose findings are taken too (:class:`Broken`'s
        # prompt files, which stay in the package without loading)
        self.alongside = alongside

    def relint(self, change: Change) -> Relinted | None:
        removed, deps, names = self.removed, change.deps, change.last["names"]
        if not change.last["complete"] or MANIFEST in removed:
            return None
        gone = removed & deps.keys()
        # the files a removed prompt read that a prompt left reads too
        shared = {f for p in gone for f in deps[p] if change.readers.beyond(f, gone)}
        if self._entangled(change, gone):
            return None
        orphans = {f for p in gone for f in deps[p] if f in change.blobs and f not in shared}
        findings = self._orphans(change, orphans)
        if findings is None:
            return None
        if shared:
            settled = settle(change.subset, change.last, change.readers, change.scopes, shared,
                             gone, None)
            if settled is None:
                return None
            findings |= settled
        findings |= {f for f in change.old
                     if f.path not in removed and f.path not in orphans and f.path not in shared}
        ordered = sorted(findings, key=ORDER)
        kept, named = dict(deps), dict(names)  # (copied in C, then the few removed)
        for p in gone:
            del kept[p]
            named.pop(p, None)
        record = Record(blobs=dict(change.blobs), findings=ordered, deps=kept, names=named,
                        complete=True)
        return Relinted(ordered, record, frozenset(gone))

    def _entangled(self, change: Change, gone: set[str]) -> bool:
        """Whether the prompts left could find differently without the removed files, other
        than on the files they shared with the removed prompts (settled apart)."""
        names, readers = change.last["names"], change.readers
        if any(readers.beyond(f, gone) for f in self.removed):
            return True  # a prompt left reads a removed file: a missing include or resource
        # a duplicate-name partner's finding, or a cycle (see Added)
        return any(readers.folded(names[p]) > 1 for p in gone) or change.scopes.any_cycle(
            change.old)

    def _orphans(self, change: Change, orphans: set[str]) -> set[Finding] | None:
        """The findings of files read by nobody now (an unused partial, a plain file),
        judged on their own with :attr:`alongside` (whose findings, all of prompt scope,
        are taken too); None when that run finds something elsewhere."""
        mine = orphans | self.alongside
        if not mine:
            return set()
        if self.alongside:  # files that do not load: the run is incomplete, and its rules
            found = change.subset({MANIFEST} | mine).findings  # ran on the partial package
        else:
            got = change.lint({MANIFEST} | mine)
            if got is None:
                return None
            found = got[0].findings
        before = set(change.old)
        if any(f.path not in mine and f not in before for f in found) or any(
                f.path in self.alongside and not change.scopes.local(f) for f in found):
            return None
        return {f for f in found if f.path in mine}


def _loads(source: Source, path: str) -> bool:
    """Whether a prompt file gets past the first stage of validation, its YAML and its
    schema: what fails there fails on its text alone, whatever else the package holds."""
    loader = Loader(source)
    loaded = loader.load(path)
    return loaded is not None and loader.validate(PromptFile, loaded, loaded.data) is not None


class Broken:
    """**Edited prompt files that no longer load** (their YAML or their schema fails; every
    file edited is one: what an editor saves mid-keystroke, or a commit that breaks one).

    Validation drops such a file from the package, which is otherwise the package without
    it (the partial package, :func:`promptops.pipeline.validate.validate`: every rule runs
    on it as on a complete one; none needs more, and no rule reads whether it is
    complete), while the file's own problems and text remain. So the findings are a
    removal's (:class:`Removed`, exact on its own conditions) plus the broken files' own
    findings, from a run on them with the manifest and the removal's orphans: validation
    stops at their text alone, and the rules that read an unloaded prompt file read its
    text (a template it names is not reported unused: the orphans are judged with it).
    A full run is made when the last run did not validate completely, when a
    package-scope finding is on a file a broken file's text names, or when any broken
    file's own finding is of package scope; the record stays incomplete, as a full
    run's would (the next additions and removals make a full run; a broken file, now
    read by no prompt's record, is a full run when edited again).
    """

    def __init__(self, broken: set[str]) -> None:
        self.broken = broken

    def relint(self, change: Change) -> Relinted | None:
        if not change.last["complete"]:
            return None
        texts = [change.source.read(p).decode("utf-8", "replace") for p in self.broken]
        if any(f.path in text for f in change.old if not change.scopes.local(f)
               for text in texts):
            return None  # e.g. an unused partial the broken text names is used now
        without = {p: b for p, b in change.blobs.items() if p not in self.broken}
        gone = Removed(set(self.broken), frozenset(self.broken)).relint(
            Change(change.source, without, change.last, change.run, change.scopes,
                   change.kept))
        if gone is None:
            return None
        return Relinted(gone.findings, {**gone.record, "blobs": dict(change.blobs),
                                        "complete": False}, gone.touched)
