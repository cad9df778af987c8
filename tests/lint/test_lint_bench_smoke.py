"""benchmarks/lint_bench.py --corpus keeps working end to end (a small replica; no timing)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers.repo import PYTHON, REPO_ROOT


def test_corpus_mode_measures_every_run_against_its_target() -> None:
    proc = subprocess.run([PYTHON, str(REPO_ROOT / "benchmarks" / "lint_bench.py"), "--corpus",
                           "120", "--rounds", "1"], capture_output=True, text=True, timeout=300,
                          cwd=REPO_ROOT)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("120 real prompts") and "median of 1 interleaved rounds" in lines[0]
    assert lines[1].split()[:3] == ["run", "wall", "s"]
    rows = {line[:34].strip(): line[34:].split() for line in lines[2:]}
    assert list(rows) == ["build --no-lint (cold)", "lint cold", "lint cached",
                          "lint cached, text output", "lint, one edited prompt",
                          "lint, edited partial everywhere"]
    assert all(float(row[0]) > 0 and float(row[1]) > 0 for row in rows.values())
    assert "<= 2x cold build, < 10 s" in lines[3] and "x) / " in lines[3]
    assert all(" / " in lines[i] and "< 1 s" in lines[i] for i in (4, 5, 6))


@pytest.fixture(scope="module")
def pycache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One bytecode folder for this module's lint_ab.py runs: each run compiled every module
    its checkouts import (promptops and its libraries) into a folder of its own, and the
    smoke tests check the script's output, not a cold compile (``--pycache``)."""
    return tmp_path_factory.mktemp("lint-ab-pycache")


def test_the_before_after_script_compares_two_checkouts(pycache: Path) -> None:
    """benchmarks/lint_ab.py runs end to end (this checkout against itself, a small replica)."""
    proc = subprocess.run([PYTHON, str(REPO_ROOT / "benchmarks" / "lint_ab.py"), str(REPO_ROOT),
                           str(REPO_ROOT), "--corpus", "80", "--rounds", "1",
                           "--pycache", str(pycache)],
                          capture_output=True, text=True, timeout=300, cwd=REPO_ROOT)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("80 real prompts") and lines[0].endswith("same findings: True")
    assert [line[:26].strip() for line in lines[2:]] == [
        "lint cold", "lint cached", "lint, one edited prompt"]


def test_the_before_after_script_measures_a_speed_corpus_part(pycache: Path) -> None:
    """``lint_ab.py --corpus-part`` times each checkout's build too and prints lint / build
    before and after (issue 26's before/after in one run; a small replica, no timing)."""
    proc = subprocess.run([PYTHON, str(REPO_ROOT / "benchmarks" / "lint_ab.py"), str(REPO_ROOT),
                           str(REPO_ROOT), "--corpus-part", "heldout", "--corpus", "40",
                           "--rounds", "1", "--pycache", str(pycache)],
                          capture_output=True, text=True, timeout=600, cwd=REPO_ROOT)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("40 real prompts (heldout part of the speed corpus)")
    assert lines[0].endswith("same findings: True")
    assert [line[:26].strip() for line in lines[2:]] == [
        "build --no-lint (cold)", "lint cold", "lint cached", "lint, one edited prompt",
        "lint cold / build"]
    assert all(cell.endswith("x") for cell in lines[-1][26:].split())



def test_distinct_copies_share_no_message_text(tmp_path: Path) -> None:
    """``corpus_pkg.generate_part(distinct=True)`` (``lint_ab.py --distinct``): every copy's
    messages start with a line of its own and are otherwise the prompt's own texts, so
    lint's once-per-distinct-text work is paid per copy (issue 26, session 9)."""
    sys.path.insert(0, str(REPO_ROOT / "benchmarks"))
    try:
        from corpus_pkg import _distinct, import_part
    finally:
        sys.path.remove(str(REPO_ROOT / "benchmarks"))

    import_part("tuning", tmp_path / "import")
    files = sorted((tmp_path / "import" / "prompts").glob("*.prompt.yaml"))
    judged = 0
    for path in files:
        text = path.read_text(encoding="utf-8")
        before = yaml.safe_load(text)
        copies = [yaml.safe_load(_distinct(text, k)) for k in (0, 1)]
        for k, after in enumerate(copies):
            assert {key: v for key, v in after.items() if key != "messages"} == \
                {key: v for key, v in before.items() if key != "messages"}
            for old, new in zip(before["messages"], after["messages"], strict=True):
                if old.get("text"):
                    assert new["text"].startswith(f"Copy {k} of this prompt.")
                    assert new["text"].replace(f"Copy {k} of this prompt.", "", 1).strip() \
                        == old["text"].strip()
                    judged += k
        for one, two in zip(copies[0]["messages"], copies[1]["messages"], strict=True):
            assert not one.get("text") or one["text"] != two["text"]
    assert len(files) > 40 and judged > 40
