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

import yaml
from helpers.repo import PYTHON, REPO_ROOT

SPEED2 = REPO_ROOT / "tests" / "corpus" / "speed2"


def _imported(corpus: str, part: str) -> int:
    record = yaml.safe_load((REPO_ROOT / "tests" / "corpus" / corpus / "import.yaml")
                            .read_text(encoding="utf-8"))
    return sum(len(row.get("prompts") or []) for row in record[part]["files"])


def test_corpus_dir_takes_the_parts_from_the_named_corpus() -> None:
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
    rows = [line[:26].strip() for line in lines[3:]]
    assert rows == ["build --no-lint (cold)", "lint cold", "lint cached",
                    "lint, one edited prompt", "lint cold / build"]


def test_a_folder_that_is_no_corpus_is_refused(tmp_path: Path) -> None:
    proc = subprocess.run([PYTHON, str(REPO_ROOT / "benchmarks" / "lint_ab.py"), str(REPO_ROOT),
                           "--corpus-part", "heldout", "--corpus", "10", "--rounds", "1",
                           "--corpus-dir", str(tmp_path)],
                          capture_output=True, text=True, timeout=300, cwd=REPO_ROOT)
    assert proc.returncode != 0
    assert "has no heldout/ folder" in proc.stderr
