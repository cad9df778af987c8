"""Issue 22's figures: byte-identical share of the corpus, tuning and held-out, per format.

    python tests/corpus/tools/fidelity_figures.py [--losses]

Each corpus entry is imported by ``promptops import`` (in-process), the package is built and
every realistic input set is rendered by promptops' own renderer, and compared with the
entry's source engine (tests/corpus/judges) - the same path as
tests/interop/test_import_command.py, whose helpers this reuses. An entry counts as
*identical* when the import exited 0 (no loss reported) and every input set was served byte
for byte as its engine renders it; *lossy* when the import named a loss (exit 1), whether or
not the text still matches; *crash* when the import raised. An "exact" claim that renders
differently is a *wrong-exact* - the figure that must be 0.

Two tables are printed: *per file* (each entry imported alone, named on the command line
with ``--from``) and *folder* (each part laid out as one folder and imported by one
``promptops import FOLDER`` with formats detected, tests/interop/folder_import.py - how a team
imports, and issue 22's acceptance figure). ``--losses`` lists every lossy entry of the
**tuning** part with its losses; the held-out part is only ever counted (README.md: tune only
on tuning files).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
TESTS = HERE.parents[2]
sys.path[:0] = [str(TESTS / "interop"), str(TESTS / "corpus" / "judges"), str(TESTS)]

import judges  # noqa: E402
from folder_import import detail, import_folder  # noqa: E402
from folder_import import outcome as folder_outcome  # noqa: E402
from test_import_command import Imported, mismatches  # noqa: E402

OUTCOMES = ("identical", "lossy", "wrong-exact", "crash", "engine refuses")


def outcome(imp: Imported, rendered: dict[tuple[str, int], Any]) -> str:
    if imp.error is not None:
        return "crash"
    if "refuses" in imp.entry.get("judge", {}):
        return "engine refuses"
    problems, _ = mismatches(imp, rendered)
    if imp.code != 0:
        return "lossy"
    return "wrong-exact" if problems or imp.format_losses else "identical"


def table(rows: dict[tuple[str, str], Counter[str]]) -> str:
    lines = ["| format | part | files | identical | lossy (named) | wrong-exact | crash | "
             "engine refuses | identical % |", "| --- | --- | --- | --- | --- | --- | --- | "
             "--- | --- |"]
    for part in ("tuning", "held-out"):
        total: Counter[str] = Counter()
        for (eco, p), c in sorted(rows.items()):
            if p != part:
                continue
            total.update(c)
            lines.append(_row(eco, part, c))
        lines.append(_row("**all**", part, total))
    return "\n".join(lines)


def _row(eco: str, part: str, c: Counter[str]) -> str:
    n = sum(c[o] for o in OUTCOMES)
    judged = n - c["engine refuses"]
    share = f"{c['identical'] / judged:.1%}" if judged else "-"
    return (f"| {eco} | {part} | {n} | {c['identical']} | {c['lossy']} | {c['wrong-exact']} | "
            f"{c['crash']} | {c['engine refuses']} | {share} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--losses", action="store_true")
    args = parser.parse_args()
    entries = judges.load_manifest()
    rendered = judges.render_all(entries)
    rows: dict[tuple[str, str], Counter[str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for e in entries:
            with contextlib.redirect_stdout(io.StringIO()):  # the import's own report
                imp = Imported(e, Path(tmp) / e["id"])
            result = outcome(imp, rendered)
            rows.setdefault((e["ecosystem"], judges.part(e)), Counter())[result] += 1
            if judges.part(e) == "tuning" and (result in ("crash", "wrong-exact")
                                              or (args.losses and result == "lossy")):
                why = imp.error or "; ".join(
                    str(x) for p in imp.ir for x in p.losses) or mismatches(imp, rendered)[0][:1]
                print(f"tuning {e['ecosystem']}/{e['id']}: {result}: {str(why)[:400]}")
    print("Per file (each entry imported alone, `promptops import FILE --from FORMAT`):\n")
    print(table(rows))
    folder_rows: dict[tuple[str, str], Counter[str]] = {}
    codes: dict[str, int | None] = {}
    for part in ("tuning", "held-out"):
        mine = [e for e in entries if judges.part(e) == part]
        with tempfile.TemporaryDirectory() as tmp:
            done = import_folder(mine, Path(tmp))
            codes[part] = None if done.code is None else int(done.code)
            if done.error:
                print(f"{part}: the folder import raised: {done.error}"[:400])
            for e in mine:
                fe = done.entries[e["id"]]
                result = folder_outcome(fe, rendered)
                folder_rows.setdefault((e["ecosystem"], part), Counter())[result] += 1
                if part == "tuning" and (result in ("crash", "wrong-exact")
                                         or (args.losses and result == "lossy")):
                    print(f"tuning (folder) {e['ecosystem']}/{e['id']}: {result}: "
                          f"{detail(fe, rendered)[:400]}")
    print("\nFolder (each part one folder, `promptops import FOLDER -o PKG --format json`; "
          f"exit codes: {codes}):\n")
    print(table(folder_rows))


if __name__ == "__main__":
    main()
