"""Time the test suite as the README runs it: the in-process part, then ``-m process``.

Prints, for each part, the wall time, the worker count and the 1-minute load average
before and after, so a figure always says what the machine was doing. The README quotes
these figures (issue 24, item 13): measure on an idle machine and under load.

    python benchmarks/suite_bench.py                 # both parts, -n 2
    python benchmarks/suite_bench.py --workers 2 --part inproc
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _load() -> float:
    return os.getloadavg()[0]


def run(part: str, workers: int) -> dict[str, object]:
    args = [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-n", str(workers)]
    if part == "process":
        args += ["-m", "process"]
    before, start = _load(), time.perf_counter()
    done = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    summary = (done.stdout.strip().splitlines() or [""])[-1]
    return {"part": part, "workers": workers, "wall_s": round(wall), "load_before": before,
            "load_after": _load(), "exit": done.returncode, "summary": summary}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--part", choices=["inproc", "process", "both"], default="both")
    opts = ap.parse_args(argv)
    parts = ["inproc", "process"] if opts.part == "both" else [opts.part]
    print(f"cores: {os.cpu_count()}")
    print("| part | workers | wall | load (1 min) before / after | result |")
    print("| --- | --- | --- | --- | --- |")
    for part in parts:
        r = run(part, opts.workers)
        print(f"| {r['part']} | {r['workers']} | {r['wall_s']} s | "
              f"{r['load_before']:.1f} / {r['load_after']:.1f} | {r['summary']} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
