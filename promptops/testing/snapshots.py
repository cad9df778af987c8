"""Golden files: which exist, which are obsolete, and writing what a run produced.

Snapshots are read from the same source as the test files (so ``--ref`` compares with
what the commit holds) but only ever written to the working tree, atomically, by the
main process after the run: a crash or a parallel worker never leaves half a file.
Snapshots are package content like any other: one that is a symlink out of the package
is refused when read, and no write or removal goes through a symlink inside the package
(a committed ``tests/__snapshots__/x -> /elsewhere`` would otherwise carry it outside).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from promptops.errors import PackageError, Problem, UnsafeWrite
from promptops.fsutil import atomic_write, remove_file
from promptops.pipeline.source import Refused, Source
from promptops.testing.cases import SNAPSHOT_DIR, Case
from promptops.testing.runner import Outcome


@dataclass
class SnapshotReport:
    written: list[str] = field(default_factory=list)  # new snapshots
    updated: list[str] = field(default_factory=list)  # changed ones (--update-snapshots)
    removed: list[str] = field(default_factory=list)  # obsolete ones (--update-snapshots)
    obsolete: list[str] = field(default_factory=list)  # obsolete ones left in place


def snapshot_files(files: list[str] | tuple[str, ...]) -> list[str]:
    return sorted(p for p in files if p.startswith(SNAPSHOT_DIR + "/") and p.endswith(".json"))


def stored(source: Source, existing: list[str], cases: list[Case]) -> dict[str, bytes]:
    """The stored bytes of every snapshot the selected cases compare with."""
    present = set(existing)
    wanted = {c.snapshot_path for c in cases if c.wants_snapshot and c.skip is None}
    out: dict[str, bytes] = {}
    refused: list[Problem] = []
    for path in sorted(wanted & present):
        try:
            out[path] = source.read(path)
        except Refused as exc:
            refused.append(Problem(path, 1, 1, f"snapshot {path!r} is {exc.why}"))
        except FileNotFoundError:
            continue  # listed but gone (a dangling symlink): the case writes a new one
    if refused:
        raise PackageError(refused)
    return out


def obsolete(existing: list[str], all_cases: list[Case]) -> list[str]:
    """Snapshots no case of the whole suite (not only the -k selection) asks for."""
    used = {c.snapshot_path for c in all_cases if c.wants_snapshot}
    return [p for p in existing if p not in used]


def apply(
    root: Path | None,
    cases: list[Case],
    outcomes: list[Outcome],
    stale: list[str],
    *,
    update: bool,
) -> SnapshotReport:
    """Write what the run produced and, with ``update``, remove obsolete snapshots.

    ``root`` is the package folder of a working-tree run, None for ``--ref`` (the
    runner then never produces content to write).
    """
    report = SnapshotReport()
    refused: list[Problem] = []
    for case, outcome in zip(cases, outcomes, strict=True):
        if outcome.snapshot is None or root is None:
            continue
        try:
            atomic_write(root / case.snapshot_path, outcome.snapshot.encode("utf-8"), root=root)
        except UnsafeWrite as exc:
            refused.append(_unsafe(case.snapshot_path, exc))
            continue
        (report.written if outcome.snapshot_state == "new" else report.updated).append(
            case.snapshot_path)
    if update and root is not None:
        for path in stale:
            try:
                remove_file(root / path, root=root)
            except UnsafeWrite as exc:
                refused.append(_unsafe(path, exc))
                continue
            report.removed.append(path)
    else:
        report.obsolete = list(stale)
    if refused:
        raise PackageError(refused)
    return report


def _unsafe(path: str, exc: UnsafeWrite) -> Problem:
    return Problem(exc.link, 1, 1, f"snapshot {path!r} is not written: {exc.link} is a symlink; "
                   "promptops never writes through a symlink inside the package (replace it "
                   "with a real folder or file)")
