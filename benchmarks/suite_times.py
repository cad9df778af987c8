"""Per-test CPU and wall time of a pytest run, per xdist worker: the suite's slowest tests.

A pytest plugin (``-p suite_times``) and its report. CPU time (the test process and the
children it reaped) says what a test costs on a loaded machine, where wall time mostly
says how loaded the machine was; the per-worker finish times show the run's tail.

    PYTHONPATH=benchmarks SUITE_TIMES=/tmp/st python -m pytest -p suite_times
    PYTHONPATH=benchmarks SUITE_TIMES=/tmp/st python -m pytest -p suite_times -m process
    python benchmarks/suite_times.py /tmp/st 20
    python benchmarks/suite_times.py /tmp/st 20 --costs tests/module_costs.json

``--costs FILE`` also merges each module's summed wall time of this run into FILE, the
table tests/conftest.py's scheduler deals modules by (longest first).
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


def _cpu() -> tuple[float, float]:
    """(the test process's own CPU seconds, its reaped children's)."""
    own, kids = (resource.getrusage(who)
                 for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime, kids.ru_utime + kids.ru_stime


def _out() -> IO[str]:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    if worker not in _files:
        prefix = os.environ.get("SUITE_TIMES", "suite-times")
        _files[worker] = open(f"{prefix}.{worker}.jsonl", "a", encoding="utf-8")  # noqa: SIM115
    return _files[worker]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, None, None]:
    start, (own, kids) = time.time(), _cpu()
    yield
    out = _out()
    own_after, kids_after = _cpu()
    out.write(json.dumps({"id": item.nodeid, "start": start, "wall": time.time() - start,
                          "cpu": own_after - own + kids_after - kids,
                          "kids": kids_after - kids,
                          "w": os.environ.get("PYTEST_XDIST_WORKER", "main"),
                          "pid": os.getpid()}) + "\n")
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


def write_costs(prefix: str, path: Path) -> None:
    """Merge the run's per-module wall seconds into ``path`` (modules it did not run keep
    theirs). Wall, not CPU: the scheduler balances the workers' finishing times, and a
    module that waits (a network, a sleep, a browser) holds its worker as long as one
    that computes."""
    rows = [json.loads(line) for f in Path(prefix).parent.glob(Path(prefix).name + ".*.jsonl")
            for line in f.read_text(encoding="utf-8").splitlines()]
    costs: dict[str, float] = collections.defaultdict(float)
    for r in rows:
        costs[r["id"].split("::", 1)[0]] += r["wall"]
    table = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    table.update({m: round(c, 1) for m, c in costs.items()})
    path.write_text(json.dumps(dict(sorted(table.items())), indent=0) + "\n",
                    encoding="utf-8")


if __name__ == "__main__":
    args = sys.argv[1:]
    if "--costs" in args:
        at = args.index("--costs")
        write_costs(args[0], Path(args[at + 1]))
        del args[at:at + 2]
    report(args[0], int(args[1]) if len(args) > 1 else 20)
