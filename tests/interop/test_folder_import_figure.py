"""Issue 22's acceptance on **folder import**: the held-out part, as one folder, >= 95% identical.

Each part of the corpus (tests/corpus/README.md's hashed split) is laid out as one folder and
imported by one ``promptops import FOLDER -o PKG --format json`` with no ``--from``
(tests/interop/folder_import.py says how, and how each entry is classed); each entry's
prompts, found by name in the JSON report, are served from the one built package and compared
with the entry's own engine. One import per part; the engine renders are the cached ones
test_import_command.py uses (``judges.render_all`` of the whole manifest).
``python tests/corpus/tools/fidelity_figures.py`` prints the per-format table.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from fidelity import judges
from folder_import import FolderImport, import_folder, outcome

ENTRIES = judges.load_manifest()
PARTS = ("tuning", "held-out")


@pytest.fixture(scope="module")
def rendered() -> dict[tuple[str, int], Any]:
    return judges.render_all(ENTRIES)  # the whole manifest: the same cache key as the others


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, FolderImport]:
    return {part: import_folder([e for e in ENTRIES if judges.part(e) == part],
                                tmp_path_factory.mktemp(part))
            for part in PARTS}


def counts(done: FolderImport, rendered: dict[tuple[str, int], Any]) -> Counter[str]:
    return Counter(outcome(fe, rendered) for fe in done.entries.values())


@pytest.mark.parametrize("part", PARTS)
def test_no_crash_and_no_wrong_exact(part: str, imported: dict[str, FolderImport],
                                     rendered: dict[tuple[str, int], Any]) -> None:
    """Exact means exact in a folder too, and no file is lost without a reason."""
    done = imported[part]
    assert done.error is None
    bad = {fe.entry["id"]: outcome(fe, rendered) for fe in done.entries.values()
           if outcome(fe, rendered) in ("crash", "wrong-exact")}
    assert bad == {}


@pytest.mark.parametrize("part", PARTS)
def test_exit_code_says_whether_anything_was_lost(part: str,
                                                  imported: dict[str, FolderImport]) -> None:
    """1 when any file (entry or sibling found in the folder) is lossy or refused, else 0;
    never 3."""
    done = imported[part]
    reports = [fe.report for fe in done.entries.values() if fe.report] + done.extra
    assert len(reports) >= len(done.entries)
    lost = any(r["outcome"] != "exact" for r in reports)
    assert done.code == (1 if lost else 0)


def test_held_out_folder_figure(imported: dict[str, FolderImport],
                                rendered: dict[tuple[str, int], Any]) -> None:
    """Issue 22: the held-out part, imported as one folder, is >= 95% byte-identical over
    the files its engines judge (printed with -s, beside the tuning figure)."""
    share = {}
    for part in PARTS:
        c = counts(imported[part], rendered)
        judged = sum(c.values()) - c["engine refuses"]
        share[part] = c["identical"] / judged
        print(f"\nfolder import, {part}: {dict(c)}; identical {c['identical']}/{judged} "
              f"({share[part]:.1%})")
    assert share["held-out"] >= 0.95
