"""Issue 22's figures: byte-identical share of the corpus, tuning and held-out, per format.

    python tests/corpus/tools/fidelity_figures.py [--family] [--losses]

Each corpus entry is imported by ``promptops import`` (in-process), the package is built and
every realistic input set is rendered by promptops' own renderer, and compared with the
entry's source engine (tests/corpus/judges) - the same path as
tests/interop/test_import_command.py, whose helpers this reuses. An entry counts as
*identical* when the import exited 0 (no loss reported) and every input set was served byte
for byte as its engine renders it; *lossy* when the import named a loss (exit 1), whether or
not the text still matches; *crash* when the import raised. An "exact" claim that renders
differently is a *wrong-exact* - the figure that must be 0.

``--family`` imports all files of one format and part together in one call (today's CLI has
no folder import: this is the closest a user gets, and one bad file sinks its family).
``--losses`` lists every lossy entry of the **tuning** part with its losses; the held-out
part is only ever counted (README.md: tune only on tuning files).
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


def family_outcomes(entries: list[dict[str, Any]], root: Path) -> dict[str, str]:
    """One ``promptops import`` call per (format, part): its files together."""
    from fidelity import ECOSYSTEM_IMPORTER

    from promptops.commands import import_
    from promptops.commands.choices import Format
    from promptops.console import Console

    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for e in entries:
        groups.setdefault((e["ecosystem"], judges.part(e)), []).append(e)
    out: dict[str, str] = {}
    for (eco, part), group in groups.items():
        folder = root / f"{eco}-{part}"
        try:
            import_.run(sources=[judges.main_file(e) for e in group], out=folder,
                        source_format=ECOSYSTEM_IMPORTER[eco], fmt=Format.text,
                        console=Console())
            ok = True
        except BaseException as exc:
            ok = False
            print(f"{eco}/{part}: the batch failed: {type(exc).__name__}: {exc}"[:300])
        for e in group:
            out[e["id"]] = "batch ok" if ok else "batch failed"
    return out


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
    parser.add_argument("--family", action="store_true")
    parser.add_argument("--losses", action="store_true")
    args = parser.parse_args()
    entries = judges.load_manifest()
    rendered = judges.render_all(entries)
    rows: dict[tuple[str, str], Counter[str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        if args.family:
            fams = family_outcomes(entries, Path(tmp))
            for e in entries:
                rows.setdefault((e["ecosystem"], judges.part(e)), Counter())[fams[e["id"]]] += 1
            for key, c in sorted(rows.items()):
                print(key, dict(c))
            return
        for e in entries:
            with contextlib.redirect_stdout(io.StringIO()):  # the import's own report
                imp = Imported(e, Path(tmp) / e["id"])
            result = outcome(imp, rendered)
            rows.setdefault((e["ecosystem"], judges.part(e)), Counter())[result] += 1
            if judges.part(e) == "tuning" and (result in ("crash", "wrong-exact")
                                              or (args.losses and result == "lossy")):
                detail = imp.error or "; ".join(
                    str(x) for p in imp.ir for x in p.losses) or mismatches(imp, rendered)[0][:1]
                print(f"tuning {e['ecosystem']}/{e['id']}: {result}: {str(detail)[:400]}")
    print(table(rows))


if __name__ == "__main__":
    main()
