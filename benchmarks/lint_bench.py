"""Lint wall time on generated packages of 100, 1,000 and 10,000 prompts (with partials).

Each size is linted three times through the real CLI in a fresh process: cold (no
cache entry), cached (nothing changed), and after touching one partial (a cache miss
again). Targets on a 2-core machine: 10,000 prompts cold < 10 s, cached < 1 s.
Usage: python benchmarks/lint_bench.py [SIZES...]
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from genpkg import commit, generate


def _lint(pkg: Path) -> tuple[float, int]:
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "promptops", "lint", str(pkg), "--format", "json"],
        capture_output=True, text=True, check=False,
    )
    took = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"lint failed: {proc.stderr}")
    return took, proc.stdout.count('"code"')


def bench(n: int, work: Path) -> tuple[float, float, float, int]:
    pkg = generate(n, work / f"pkg{n}")
    commit(pkg)
    shutil.rmtree(pkg / ".git" / "promptops", ignore_errors=True)
    cold, findings = _lint(pkg)
    cached, _ = _lint(pkg)
    partial = pkg / "partials" / "rules.j2"
    partial.write_text(partial.read_text() + "Be brief.\n")
    changed, _ = _lint(pkg)
    return cold, cached, changed, findings


def main(sizes: list[int]) -> None:
    print(f"{'prompts':>8} {'cold s':>8} {'cached s':>9} {'1 edit s':>9} {'findings':>9}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            cold, cached, changed, findings = bench(n, Path(tmp))
            print(f"{n:>8} {cold:>8.2f} {cached:>9.2f} {changed:>9.2f} {findings:>9}")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [100, 1000, 10000])
