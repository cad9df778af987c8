"""How long each test waits with nothing to compute: the suite's idle wall time, measured
on a loaded machine.

On a shared machine a test's wall time says mostly how loaded the machine was. Its CPU
time (benchmarks/suite_times.py) says what it computes, but not what it waits for: a poll,
a sleep, a socket, a browser, pip's index. This script samples, ten times a second, the
state of every thread of every xdist worker and of everything the worker started. A
moment at which none of them is running or runnable (state R) is a wait that an idle
machine has too; a moment at which one is runnable is CPU work, which on an idle machine
takes its CPU time. So a test's wall time on an idle machine is about its CPU time plus its
waits, and a run's wall time with N workers on C cores is about

    max(CPU of all tests / C, (CPU + waits of all tests) / N) + collection

(the larger of the cores' work and the workers' queue), plus the tail the scheduler leaves.

    python benchmarks/suite_waits.py record /tmp/st-waits.jsonl &   # then, in this folder:
    PYTHONPATH=benchmarks SUITE_TIMES=/tmp/st python -m pytest -m process -p suite_times
    python benchmarks/suite_waits.py report /tmp/st /tmp/st-waits.jsonl --cores 2

``record`` ends by itself once the workers it found are gone.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import time
from pathlib import Path

TICK = 0.1
WORKER_MARK = b"exec(eval(sys.stdin.readline()))"  # execnet's popen gateway: an xdist worker


def _table() -> dict[int, tuple[int, int]]:
    """pid -> (parent pid, 2 if one of its threads is running or runnable, 1 if one waits on
    the disk (state D: an fsync, a page in), else 0)."""
    out: dict[int, tuple[int, int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        try:
            stat = Path(f"/proc/{pid}/stat").read_bytes()
            ppid = int(stat[stat.rindex(b")") + 2:].split()[1])
            states = {Path(f"/proc/{pid}/task/{t}/stat").read_bytes().rsplit(b")", 1)[1][1:2]
                      for t in os.listdir(f"/proc/{pid}/task")}
        except (OSError, ValueError):
            continue
        out[pid] = (ppid, 2 if b"R" in states else 1 if b"D" in states else 0)
    return out


def _workers(table: dict[int, tuple[int, int]], cwd: Path) -> list[int]:
    """The xdist workers running in ``cwd`` (other people's suites on the machine are not
    this run's)."""
    found = []
    for pid in table:
        try:
            if WORKER_MARK in Path(f"/proc/{pid}/cmdline").read_bytes() and \
                    Path(os.readlink(f"/proc/{pid}/cwd")) == cwd:
                found.append(pid)
        except OSError:
            continue
    return found


def record(out: Path, cwd: Path) -> None:
    """Every tick: one line per worker, ``[time, pid, state]``: 2 if a process or thread of
    its tree is running or runnable, 1 if none is but one waits on the disk, 0 if all
    sleep (a poll, a socket, a pipe with nobody writing)."""
    seen: set[int] = set()
    with out.open("a", encoding="utf-8") as f:
        while True:
            start = time.time()
            table = _table()
            workers = _workers(table, cwd)
            seen.update(workers)
            if seen and not workers:
                return
            children = collections.defaultdict(list)
            for pid, (ppid, _) in table.items():
                children[ppid].append(pid)
            for worker in workers:
                state, todo = 0, [worker]
                while todo and state < 2:
                    pid = todo.pop()
                    state = max(state, table.get(pid, (0, 0))[1])
                    todo += children[pid]
                f.write(json.dumps([round(start, 2), worker, state]) + "\n")
            f.flush()
            time.sleep(max(0.0, TICK - (time.time() - start)))


def report(prefix: str, samples: Path, cores: int, collection: float) -> None:
    rows = [json.loads(line) for f in Path(prefix).parent.glob(Path(prefix).name + ".*.jsonl")
            for line in f.read_text(encoding="utf-8").splitlines()]
    ticks = collections.defaultdict(list)
    for t, pid, state in (json.loads(line) for line in
                          samples.read_text(encoding="utf-8").splitlines()):
        ticks[pid].append((t, state))
    waits: dict[str, float] = {}
    disk: dict[str, float] = {}
    for r in rows:
        end = r["start"] + r["wall"]
        # each sample stands for the time up to the next one (a loaded machine samples
        # less often than TICK); the share of the test's wall time in each state
        seen = [(t, s) for t, s in ticks.get(r.get("pid", -1), ()) if r["start"] <= t < end]
        if not seen:
            waits[r["id"]] = disk[r["id"]] = 0.0
            continue
        waits[r["id"]] = r["wall"] * sum(1 for _, s in seen if s == 0) / len(seen)
        disk[r["id"]] = r["wall"] * sum(1 for _, s in seen if s == 1) / len(seen)
    cpu = sum(r["cpu"] for r in rows)
    wait = sum(waits.values())
    print(f"{len(rows)} tests: CPU {cpu:.0f} s, waits {wait:.0f} s (nothing of the test's "
          f"process tree runnable), disk waits {sum(disk.values()):.0f} s (left out below: "
          f"a loaded disk's)")
    by_module: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0, 0.0])
    for r in rows:
        m = by_module[r["id"].split("::")[0]]
        m[0] += r["cpu"]
        m[1] += waits[r["id"]]
        m[2] += r["wall"]
    print("| module | CPU | waits | idle wall (CPU + waits) |\n| --- | --- | --- | --- |")
    for module, (c, w, _) in sorted(by_module.items(), key=lambda kv: -(kv[1][0] + kv[1][1])
                                    )[:30]:
        print(f"| `{module}` | {c:.1f} s | {w:.1f} s | {c + w:.1f} s |")
    longest = max((r["cpu"] + waits[r["id"]], r["id"]) for r in rows)
    print(f"longest test, idle estimate: {longest[0]:.1f} s ({longest[1]})")
    for n in (cores, cores + 1, 2 * cores, 3 * cores):
        est = max(cpu / cores, (cpu + wait) / n, longest[0]) + collection
        print(f"{n} workers on {cores} cores: about {est:.0f} s "
              f"(cores' work {cpu / cores:.0f} s, workers' queue {(cpu + wait) / n:.0f} s, "
              f"+ {collection:.0f} s start and collection)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record")
    rec.add_argument("out", type=Path)
    rec.add_argument("--cwd", type=Path, default=Path.cwd(),
                     help="the folder the run was started in (default: this one)")
    rep = sub.add_parser("report")
    rep.add_argument("prefix")
    rep.add_argument("samples", type=Path)
    rep.add_argument("--cores", type=int, default=2)
    rep.add_argument("--collection", type=float, default=8.0,
                     help="seconds from the start to the first test (start-up, collection)")
    args = parser.parse_args()
    if args.command == "record":
        record(args.out, args.cwd.resolve())
    else:
        report(args.prefix, args.samples, args.cores, args.collection)


if __name__ == "__main__":
    main()
