"""benchmarks/lint_bench.py --corpus keeps working end to end (a small replica; no timing)."""

from __future__ import annotations

import subprocess

from repo_helpers import PYTHON, REPO_ROOT


def test_corpus_mode_measures_every_run() -> None:
    proc = subprocess.run([PYTHON, str(REPO_ROOT / "benchmarks" / "lint_bench.py"), "--corpus",
                           "120"], capture_output=True, text=True, timeout=300, cwd=REPO_ROOT)
    assert proc.returncode == 0, proc.stderr
    rows = {line[:34].strip(): line[34:].split() for line in proc.stdout.splitlines()[2:-1]}
    assert set(rows) == {"build --no-lint (cold)", "lint cold", "lint cached",
                         "lint, one edited prompt", "lint, edited partial everywhere"}
    assert all(float(wall) > 0 and float(cpu) > 0 for wall, cpu in rows.values())
    assert proc.stdout.startswith("120 real prompts")
