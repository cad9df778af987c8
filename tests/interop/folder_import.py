"""Issue 22's folder-import figure: one part of the corpus laid out as ONE folder, imported once.

A team arrives with a folder, not with one file at a time, so the acceptance figure is taken
the way they import: every entry of a part (tuning or held-out) is copied to
``FOLDER/<ecosystem>/<id>/`` with the sibling files it needs (partials, samples,
``template_path`` files) at their relative places, and one ``promptops import FOLDER -o PKG
--format json`` (in-process) imports the lot, with no ``--from``: each file's format is
detected as a user's would be. The JSON report lists, per source file, its outcome and the
prompt names it became (renamed with its folder's name on a clash); each entry's prompts are
rendered through the one built package with the entry's input sets and compared byte for byte
with the entry's own engine (tests/corpus/judges), as test_import_command.py does per file.

Outcomes per entry, as the per-file figure counts them: *identical* (the file reported exact
and every input set is served as its engine renders it), *lossy* (reported lossy, or refused
with a reason), *wrong-exact* (reported exact but served differently: must be 0), *crash*
(the import raised, the file is missing from the report, or a refusal says it is a promptops
bug), *engine refuses* (the entry's own engine cannot load it; out of the denominator).
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fidelity import entry_files, judges

from promptops.commands import import_
from promptops.commands.choices import Format
from promptops.console import Console
from promptops.interop import ir
from promptops.interop.importers import IMPORTERS
from promptops.interop.package import to_document
from promptops.pipeline.build import Build
from promptops.render.renderer import Renderer

OUTCOMES = ("identical", "lossy", "wrong-exact", "crash", "engine refuses")


@dataclass
class FolderEntry:
    """One entry as the folder import left it; duck-typed like test_import_command.Imported
    so that its ``mismatches`` compares it."""

    entry: dict[str, Any]
    report: dict[str, Any] | None
    code: int  # this file's share of the exit code: 0 exact, 1 lossy or refused
    error: str | None = None
    ir: list[ir.IRPrompt] = field(default_factory=list)
    format_losses: list[ir.Loss] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    bundle: Any = None
    renderer: Any = None


@dataclass
class FolderImport:
    """One part imported as one folder: the process's exit code and each entry's share."""

    code: int | None  # None when the import raised (``error`` says what)
    error: str | None
    entries: dict[str, FolderEntry]
    extra: list[dict[str, Any]]  # reports of files that are no entry's main file (siblings)


def lay_out(entries: Iterable[dict[str, Any]], folder: Path) -> dict[str, dict[str, Any]]:
    """Copy each entry's files to ``folder/<ecosystem>/<id>/``; the main files' paths."""
    mains: dict[str, dict[str, Any]] = {}
    for e in entries:
        target = folder / e["ecosystem"] / e["id"]
        for f in e["files"]:
            dest = target / f["name"]
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(judges.entry_dir(e) / f["name"], dest)
        mains[(target / e["files"][0]["name"]).as_posix()] = e
    return mains


def import_folder(entries: list[dict[str, Any]], root: Path) -> FolderImport:
    """``promptops import root/src -o root/pkg --format json`` of ``entries``, in-process."""
    src, pkg = root / "src", root / "pkg"
    mains = lay_out(entries, src)
    console = Console()
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            code = import_.run(sources=[src], out=pkg, source_format=None, fmt=Format.json,
                               console=console)
    except Exception as exc:  # what the figure counts as a crash (the CLI: exit 3)
        error = f"{type(exc).__name__}: {exc}"
        return FolderImport(None, error, {e["id"]: FolderEntry(e, None, 1, error)
                                          for e in entries}, [])
    reports = json.loads(out.getvalue())
    by_source = {Path(r["source"]).as_posix(): r for r in reports}
    bundle = Build(pkg).bundle if any(r["prompts"] for r in reports) else None
    renderer = Renderer(bundle) if bundle is not None else None
    done: dict[str, FolderEntry] = {}
    for main, e in mains.items():
        r = by_source.get(main)
        if r is None:
            done[e["id"]] = FolderEntry(e, None, 1, f"{main}: not in the import's report "
                                        "(skipped as no prompt)")
            continue
        fe = FolderEntry(e, r, 0 if r["outcome"] == "exact" else 1, bundle=bundle,
                         renderer=renderer, names=list(r["prompts"]))
        if r["refused"] and "promptops bug" in r["refused"]:
            fe.error = r["refused"]
        elif r["from"] is not None and r["prompts"]:
            name, text, siblings = entry_files(e)
            fe.ir = IMPORTERS[r["from"]](name, text, siblings)
            fe.format_losses = [x for p in fe.ir for x in to_document(p, "standalone")[1]]
        done[e["id"]] = fe
    extra = [r for src_path, r in by_source.items() if src_path not in mains]
    return FolderImport(code, None, done, extra)


def outcome(fe: FolderEntry, rendered: dict[tuple[str, int], Any]) -> str:
    """The entry's class in the figure (module docstring)."""
    from test_import_command import mismatches

    if fe.error is not None:
        return "crash"
    if "refuses" in fe.entry.get("judge", {}):
        return "engine refuses"
    if fe.code != 0:
        return "lossy"
    problems, _ = mismatches(fe, rendered)  # type: ignore[arg-type]
    return "wrong-exact" if problems or fe.format_losses else "identical"


def detail(fe: FolderEntry, rendered: dict[tuple[str, int], Any]) -> str:
    """Why an entry is not identical, in one line (for the tuning part's listing)."""
    from test_import_command import mismatches

    if fe.error:
        return fe.error
    r = fe.report or {}
    if r.get("refused"):
        return f"refused: {r['refused']}"
    losses = "; ".join(f"{x['what']}: {x['reason']}" for x in r.get("losses", []))
    if losses:
        return f"from {r.get('from')}: {losses}"
    return str(mismatches(fe, rendered)[0][:1])  # type: ignore[arg-type]
