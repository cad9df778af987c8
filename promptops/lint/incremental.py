"""An edited, added or removed prompt re-lints that prompt, not the package.

The cache (promptops.lint.cache) answers an unchanged package; after a change, the last
record says which prompt reads which files. Three kinds of change take a fast path (edits,
additions, removals; edits and additions together too), and each gives exactly what a full
run would (tests/lint/test_incremental.py, test_incremental_added.py); anything else is a
full run.

**Edited files** (the same file list). The prompts that read a changed file are linted on
their own (with every template and resource, without the other prompts), and their
findings replace the old ones on the files only they read. A full run is made when:

- the manifest or a file no prompt reads changed;
- an edited prompt's name or the set of files it reads changed (cross-file rules such as
  duplicate names, unused partials, include cycles and depth read that structure; their old
  findings are kept only while it is unchanged);
- a file an edited prompt shares with an unchanged prompt has findings, before or after
  (which prompt caused them is not recorded, and some rules judge a shared template by the
  first prompt that renders it, so they could not be replaced exactly);
- a base revision is compared (6xx read the whole bundle).

**Added files** (nothing changed or removed: a new prompt, a new partial, a new resource;
what ``serve`` sees when a commit adds a prompt to a large package). The added files are
linted on their own with the manifest, the old files they read joining them when no old
prompt read those; old findings stay. This is exact because, when the last run validated
completely, no old prompt can read an added file (it would have been a missing include or
resource, a load problem), so old prompts, the templates they reach and their findings are
unchanged, and the cross-file rules can only gain findings on what the added prompts reach.
A full run is made when:

- the last run did not validate completely, or this one does not (a load problem can drop
  the partial package and with it every prompt's findings);
- an added prompt's name equals an old one's up to case and ``-``/``_`` (which of the two
  is the duplicate depends on their order), or an added prompt reads an old prompt file;
- an added prompt reads a file an old prompt reads and that file has findings, before or
  after (as for edits);
- any include cycle exists (include depth is computed along paths a cycle cuts short, in
  the order the prompts are visited);
- files were also removed in the same change, or more than half the package was added.

Additions and edits in one change (a pull of several commits) are the edits first, then
the additions on that result: each step exact, so both are.

**Removed files** (nothing added or changed). A removed prompt's findings go with it, and
so do those of files nobody reads; files only the removed prompts read are linted on their
own (an unused partial now, a plain file). A full run is made when the last run did not
validate completely, a prompt left reads a removed file (a missing include or resource), a
removed prompt read a file another prompt reads (that file may now be judged by another
prompt, as for edits), a removed prompt's name folds onto another's, a cycle exists, or
files were also added or edited.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from promptops.lint.cache import Record
from promptops.lint.engine import Result
from promptops.lint.problem import Finding
from promptops.lint.rules.po106_duplicate_prompt_name import fold
from promptops.pipeline.source import MANIFEST, Origin, Source

# Rules whose findings depend on more than the prompts that read a file.
CROSS = frozenset({"PO106", "PO302", "PO303", "PO305"})
CYCLE = "PO302"


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


Run = Callable[[Source], Result]


def relint(source: Source, blobs: Mapping[str, str], last: Record,
           run: Run) -> Relinted | None:
    """The findings after a change, from ``last`` and a run on the changed prompts alone;
    None when only a full run can give them exactly."""
    old_blobs: dict[str, str] = last["blobs"]
    added = [p for p in blobs if p not in old_blobs]
    removed = [p for p in old_blobs if p not in blobs]
    changed = {p for p, b in blobs.items() if p in old_blobs and old_blobs[p] != b}
    if removed:
        return None if added or changed else _removed(source, blobs, set(removed), last, run)
    if not changed:
        return _added(source, blobs, set(added), last, run) if added else None
    found = _edited(source, changed, last, run)
    if found is None:
        return None
    # the edits first, on the old file list (what a pull of an edit and an addition is)
    record: Record = {**last, "blobs": {p: blobs[p] for p in old_blobs}, "findings": found}
    if added:
        return _added(source, blobs, set(added), record, run)
    return Relinted(found, {**record, "blobs": dict(blobs)})


def _edited(source: Source, changed: set[str], last: Record, run: Run) -> list[Finding] | None:
    deps: dict[str, list[str]] = last["deps"]
    names: dict[str, str] = last["names"]
    read = {f for files in deps.values() for f in files}
    if not changed or MANIFEST in changed or any(
            p not in deps and p not in read for p in changed):
        return None
    affected = {p for p in deps if p in changed or changed.intersection(deps[p])}
    if len(affected) * 2 > len(deps):  # most of the package: a full run is as cheap
        return None
    reach = {f for p in affected for f in deps[p]}
    result = run(Subset(source, {MANIFEST} | affected | reach))
    if result.deps is None or result.names is None or any(
            result.deps.get(p) != deps[p] or result.names.get(p) != names[p]
            for p in affected):
        return None
    others = {f for p, files in deps.items() if p not in affected for f in files}
    shared = reach & others
    old: list[Finding] = last["findings"]
    if any(f.path in shared and f.code not in CROSS for f in (*old, *result.findings)):
        return None
    mine = (reach - shared) | affected
    kept = [f for f in old if f.path not in mine or f.code in CROSS]
    new = [f for f in result.findings if f.path in mine and f.code not in CROSS]
    return sorted(set(kept) | set(new))


def _complete(result: Result) -> tuple[Result, dict[str, list[str]], dict[str, str]] | None:
    """A run whose package validated completely, with what its prompts read and are named."""
    if result.package is None or result.deps is None or result.names is None:
        return None
    return result, result.deps, result.names


def _added(source: Source, blobs: Mapping[str, str], added: set[str], last: Record,
           run: Run) -> Relinted | None:
    deps: dict[str, list[str]] = last["deps"]
    old: list[Finding] = last["findings"]
    if not last["complete"] or MANIFEST in added or len(added) * 2 > len(deps):
        return None
    read = {f for files in deps.values() for f in files}
    keep = {MANIFEST} | added
    got = _complete(run(Subset(source, keep)))
    if got is None:
        return None  # a load problem in what was added: only a full run places it exactly
    result, new_deps, new_names = got
    reach = {f for files in new_deps.values() for f in files}
    # Old files only added prompts read: judged by the subset alone (as templates now, if
    # they are included), so they join it and their old findings give way. (An old prompt
    # file read so joins as a prompt, whose name then is an old one: a full run, below.)
    joined = {f for f in reach if f in blobs and f not in added and f not in read}
    if joined:
        got = _complete(run(Subset(source, keep | joined)))
        if got is None:
            return None
        result, new_deps, new_names = got
    folded = {fold(n) for n in last["names"].values()}
    if any(fold(n) in folded for n in new_names.values()):
        return None
    mine, before = added | joined, set(old)
    if any(f.code == CYCLE for f in (*old, *result.findings)) or any(
            f.path not in mine and f not in before for f in result.findings):
        return None  # a cycle, or a new finding on a file old prompts read too
    shared = reach & read
    if any(f.path in shared for f in old):
        return None
    findings = sorted({f for f in old if f.path not in joined} | set(result.findings))
    record = Record(blobs=dict(blobs), findings=findings, deps={**deps, **new_deps},
                    names={**last["names"], **new_names}, complete=True)
    return Relinted(findings, record)


def _removed(source: Source, blobs: Mapping[str, str], removed: set[str], last: Record,
             run: Run) -> Relinted | None:
    """Prompts that read nothing another prompt reads, and files nobody reads, removed."""
    deps: dict[str, list[str]] = last["deps"]
    old: list[Finding] = last["findings"]
    if not last["complete"] or MANIFEST in removed:
        return None
    gone = removed & deps.keys()
    kept = {p: files for p, files in deps.items() if p not in gone}
    read = {f for files in kept.values() for f in files}
    if removed & read:
        return None  # a prompt left reads a removed file: a missing include or resource
    orphans = {f for p in gone for f in deps[p] if f in blobs and f not in read}
    if any(f in read for p in gone for f in deps[p]):
        return None  # what the removed prompt shared may now be judged by another prompt
    folded = [fold(n) for n in last["names"].values()]
    if any(folded.count(fold(last["names"][p])) > 1 for p in gone) or any(
            f.code == CYCLE for f in old):
        return None  # a duplicate-name partner's finding, or a cycle (see _added)
    findings = {f for f in old if f.path not in removed and f.path not in orphans}
    if orphans:  # read by nobody now: an unused partial, a plain file, judged on their own
        got = _complete(run(Subset(source, {MANIFEST} | orphans)))
        if got is None:
            return None
        before = set(old)
        if any(f.path not in orphans and f not in before for f in got[0].findings):
            return None
        findings |= {f for f in got[0].findings if f.path in orphans}
    ordered = sorted(findings)
    record = Record(blobs=dict(blobs), findings=ordered, deps=kept,
                    names={p: n for p, n in last["names"].items() if p not in gone},
                    complete=True)
    return Relinted(ordered, record)
