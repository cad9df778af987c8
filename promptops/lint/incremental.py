"""One edited prompt re-lints that prompt, not the package.

The cache (promptops.lint.cache) answers an unchanged package; after an edit, the last full
record says which prompt reads which files. The prompts that read a changed file are linted
on their own (with every template and resource, without the other prompts), and their
findings replace the old ones on the files only they read. The result equals a full run
whenever the edit cannot change a finding elsewhere, and a full run is made otherwise:

- the package's file list, its manifest or a file no prompt reads changed;
- an edited prompt's name or the set of files it reads changed (cross-file rules such as
  duplicate names, unused partials, include cycles and depth read that structure; their old
  findings are kept only while it is unchanged);
- a file an edited prompt shares with an unchanged prompt had findings (which prompt caused
  them is not recorded, so they could not be replaced exactly);
- a base revision is compared (6xx read the whole bundle).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from promptops.lint.cache import Record
from promptops.lint.engine import Result
from promptops.lint.problem import Finding
from promptops.pipeline.source import MANIFEST, Origin, Source

# Rules whose findings depend on more than the prompts that read a file.
CROSS = frozenset({"PO106", "PO302", "PO303", "PO305"})


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


def relint(source: Source, blobs: Mapping[str, str], last: Record,
           run: Callable[[Source], Result]) -> list[Finding] | None:
    """The findings after an edit, from ``last`` and a run on the edited prompts alone; None
    when only a full run can give them exactly."""
    old_blobs: dict[str, str] = last["blobs"]
    deps: dict[str, list[str]] = last["deps"]
    names: dict[str, str] = last["names"]
    if set(old_blobs) != set(blobs):
        return None
    changed = {p for p, b in blobs.items() if old_blobs.get(p) != b}
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
    if any(f.path in shared and f.code not in CROSS for f in old):
        return None
    mine = (reach - shared) | affected
    kept = [f for f in old if f.path not in mine or f.code in CROSS]
    new = [f for f in result.findings if (f.path in mine or f.path in shared)
           and f.code not in CROSS]
    return sorted(set(kept) | set(new))
