"""``lint_bench.py --corpus-part ... --corpus-dir DIR`` measures the corpus it is given.

Issue 26 (session 10): the second fresh corpus (tests/corpus/speed2) is measured by the same
runs as the first; a benchmark that silently fell back to tests/corpus/speed would report the
tuned corpus's figures under the fresh one's name. The number of imported prompts each part
is replicated from is the corpus's own (its import.yaml), not the first corpus's. Small
replicas, no timing asserted.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml
from helpers.repo import PYTHON, REPO_ROOT

SPEED2 = REPO_ROOT / "tests" / "corpus" / "speed2"


def _imported(corpus: str, part: str) -> int:
    record = yaml.safe_load((REPO_ROOT / "tests" / "corpus" / corpus / "import.yaml")
                            .read_text(encoding="utf-8"))
    return sum(len(row.get("prompts") or []) for row in record[part]["files"])


def test_corpus_dir_takes_the_parts_from_the_named_corpus() -> None:
    """``--corpus-part both`` imports each part of the named corpus, replicates it and prints
    issue 26's runs for tuning and held-out side by side (no timing asserted).

    This run also holds what tests/lint/test_lint_bench_smoke.py checked with a second run on
    the default corpus (tests/corpus/speed, not distinct): the same ``corpus_parts`` path
    from import to table, whose only differences are the folder it is given and the
    replica's distinct first lines; the default folder is checked in-process below."""
    assert _imported("speed2", "tuning") != _imported("speed", "tuning")  # else proves nothing
    proc = subprocess.run([PYTHON, str(REPO_ROOT / "benchmarks" / "lint_bench.py"),
                           "--corpus-part", "both", "50", "--rounds", "1",
                           "--corpus-dir", str(SPEED2), "--distinct"],
                          capture_output=True, text=True, timeout=600, cwd=REPO_ROOT)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    for line, part in zip(lines[:2], ("tuning", "heldout"), strict=True):
        assert line.startswith(f"{part}: 50 prompts replicated from "
                               f"{_imported('speed2', part)} imported prompts"), line
        assert line.endswith(f"every copy distinct; corpus {SPEED2}"), line
    assert "load average" in lines[0]
    assert lines[2].split()[:5] == ["run", "tuning", "wall", "s", "tuning"]
    rows = {line[:26].strip(): line[26:].split() for line in lines[3:]}
    assert list(rows) == ["build --no-lint (cold)", "lint cold", "lint cached",
                          "lint, one edited prompt", "lint cold / build"]
    assert all(float(row[i]) > 0 for row in list(rows.values())[:4] for i in range(4))
    ratio = rows["lint cold / build"]
    assert ratio[0].endswith("x") and ratio[1].endswith("x") and float(ratio[0][:-1]) > 0


def test_without_corpus_dir_the_parts_come_from_the_speed_corpus(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No ``--corpus-dir``: ``corpus_parts`` replicates tests/corpus/speed, as the smoke run
    above does the named one (the replica stopped at its first call: the rest is the
    path that run takes)."""
    monkeypatch.syspath_prepend(str(REPO_ROOT / "benchmarks"))
    import corpus_pkg
    import lint_bench

    asked: list[tuple[str, Path, bool]] = []

    class Stop(Exception):
        pass

    def generate_part(part: str, n: int, out: Path, *, distinct: bool, corpus: Path) -> Path:
        asked.append((part, corpus, distinct))
        raise Stop

    monkeypatch.setattr(corpus_pkg, "generate_part", generate_part)
    with pytest.raises(Stop):
        lint_bench.corpus_parts(["tuning", "heldout"], 60, tmp_path, 1)
    assert asked == [("tuning", (REPO_ROOT / "tests" / "corpus" / "speed").resolve(), False)]


def test_a_folder_that_is_no_corpus_is_refused(tmp_path: Path) -> None:
    proc = subprocess.run([PYTHON, str(REPO_ROOT / "benchmarks" / "lint_ab.py"), str(REPO_ROOT),
                           "--corpus-part", "heldout", "--corpus", "10", "--rounds", "1",
                           "--corpus-dir", str(tmp_path)],
                          capture_output=True, text=True, timeout=300, cwd=REPO_ROOT)
    assert proc.returncode != 0
    assert "has no heldout/ folder" in proc.stderr
