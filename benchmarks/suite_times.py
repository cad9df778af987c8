"""Per-test CPU and wall time of a pytest run, per xdist worker: the suite's slowest tests.

A pytest plugin (``-p suite_times``) and its report. CPU time (the test process and the
children it reaped) says what a test costs on a loaded machine, where wall time mostly
says how loaded the machine was; the per-worker finish times show the run's tail.

    PYTHONPATH=benchmarks SUITE_TIMES=/tmp/st python -m pytest -p suite_times
    PYTHONPATH=benchmarks SUITE_TIMES=/tmp/st python -m pytest -p suite_times -m process
    python benchmarks/suite_times.py /tmp/st 20
"""

from __future__ import annotations

import collections
import json
import os
import resource
import sys
import time
from collections.abc import Generator
from pathlib import Path
from typing import IO

import pytest

_files: dict[str, IO[str]] = {}


def _cpu() -> float:
    own, kids = (resource.getrusage(who)
                 for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _out() -> IO[str]:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    if worker not in _files:
        prefix = os.environ.get("SUITE_TIMES", "suite-times")
        _files[worker] = open(f"{prefix}.{worker}.jsonl", "a", encoding="utf-8")  # noqa: SIM115
    return _files[worker]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, None, None]:
    start, cpu = time.time(), _cpu()
    yield
    out = _out()
    out.write(json.dumps({"id": item.nodeid, "start": start, "wall": time.time() - start,
                          "cpu": _cpu() - cpu,
                          "w": os.environ.get("PYTEST_XDIST_WORKER", "main")}) + "\n")
    out.flush()


def report(prefix: str, n: int) -> None:
    rows = [json.loads(line) for f in Path(prefix).parent.glob(Path(prefix).name + ".*.jsonl")
            for line in f.read_text(encoding="utf-8").splitlines()]
    print(f"{len(rows)} tests, CPU {sum(r['cpu'] for r in rows):.0f} s, "
          f"wall summed over workers {sum(r['wall'] for r in rows):.0f} s")
    print("| # | test | CPU | wall |\n| --- | --- | --- | --- |")
    for i, r in enumerate(sorted(rows, key=lambda r: -r["cpu"])[:n], 1):
        print(f"| {i} | `{r['id']}` | {r['cpu']:.1f} s | {r['wall']:.0f} s |")
    workers = collections.defaultdict(list)
    for r in rows:
        workers[r["w"]].append(r)
    first = min(r["start"] for r in rows)
    for w, rs in sorted(workers.items()):
        end = max(r["start"] + r["wall"] for r in rs)
        print(f"{w}: {len(rs)} tests, last one ends {end - first:.0f} s after the first starts")


if __name__ == "__main__":
    report(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 20)
