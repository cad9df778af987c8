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
