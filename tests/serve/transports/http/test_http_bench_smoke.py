"""benchmarks/http_bench.py keeps working end to end (fan-out only, tiny; no timing asserted)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from helpers.repo import REPO_ROOT


def test_http_bench_fanout_runs_and_writes_its_section(tmp_path: Path) -> None:
    docs = tmp_path / "benchmarks.md"
    docs.write_text("# Benchmarks\n\n## Other\n\nkept\n")
    args = [sys.executable, str(REPO_ROOT / "benchmarks" / "http_bench.py"), "--bench-dir",
            str(tmp_path / "no-shared-bench"), "--prompts", "20", "--listeners", "5",
            "--fanout-runs", "1", "--warm", "0.3", "--write-docs", "--docs", str(docs)]
    for _ in range(2):  # the second run replaces the section
        done = subprocess.run(args, capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert done.returncode == 0, done.stderr[-3000:]
    assert "A commit reaching 5 open" in done.stdout
    text = docs.read_text()
    assert text.count("## HTTP server (`serve --http`)") == 1 and "## Other\n\nkept" in text


def test_hostile_http_bench_runs_and_prints_its_figures(tmp_path: Path) -> None:
    """benchmarks/hostile_http.py end to end, tiny (issue 23's acceptance benchmark)."""
    args = [sys.executable, str(REPO_ROOT / "benchmarks" / "hostile_http.py"), "--slow", "20",
            "--header-mb", "1", "--requests", "50", "--prompts", "5", "--seconds", "3"]
    done = subprocess.run(args, capture_output=True, text=True, timeout=180, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "prompts/get under attack" in done.stdout and "growth" in done.stdout
    # 1 MB: all of it is read (and dropped) after the refusal, so the 431 is always seen
    assert "big_status_431" in done.stdout, done.stdout
