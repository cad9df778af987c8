"""What repository mode's follower costs a serving process: its CPU idle and per pipelined get.

``floor_bench.py``'s CPU per get is the whole process's: in ``serve PKG`` that includes the
follower thread, which polls HEAD every 50 ms (``serve/follow.py`` ``POLL_S``) whether or
not requests are being answered; ``serve --bundle`` has no such thread. This script spawns
``serve PKG`` from each given tree (interleaved rounds), initializes it and answers one
get of every prompt (each template compiled), then reads each thread's CPU from
``/proc/PID/task/TID/schedstat`` (nanoseconds on the CPU):

* **idle**: every thread's CPU over ``--seconds`` with no request, in ms a second (the
  follower's polls, nothing else runs);
* **per get**: ``--gets`` pipelined gets; the thread that answered them (the one with the
  most CPU) and all the others, in µs a get.

The packages are ``floor_instructions.py``'s (run it once with ``--keep DIR``). Linux only.

Usage: python benchmarks/follow_poll.py --keep DIR --tree before=TREE --tree after=TREE
[--size 1000] [--rounds 3] [--seconds 4] [--gets 20000]   (TREE: a checkout's root, put
first on PYTHONPATH)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path


def line(obj: object) -> bytes:
    return (json.dumps(obj, separators=(",", ":")) + "\n").encode()


def get(i: int, name: str) -> bytes:
    return line({"jsonrpc": "2.0", "id": i, "method": "prompts/get",
                 "params": {"name": name, "arguments": {"topic": "x"}}})


INIT = line({"jsonrpc": "2.0", "id": 0, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": {"name": "follow_poll", "version": "1"}}})


def cpu(pid: int) -> dict[str, int]:
    """Nanoseconds on the CPU of each thread of ``pid``."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
            out[tid] = int(f.read().split()[0])
    return out


def one(tree: Path, keep: Path, size: int, names: list[str], seconds: float,
        n: int) -> tuple[float, float, float]:
    """(idle ms a second, answering µs a get, other threads µs a get) of one server."""
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONPYCACHEPREFIX": str(keep / "pycache")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    proc = subprocess.Popen([sys.executable, "-m", "promptops", "serve", str(keep / f"pkg{size}")],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=env, cwd=keep)  # not a checkout:
    # `python -m` puts the working directory first on sys.path, before PYTHONPATH's tree
    assert proc.stdin is not None and proc.stdout is not None
    stdin, stdout = proc.stdin, proc.stdout
    try:
        stdin.write(INIT + b"".join(get(i + 1, nm) for i, nm in enumerate(names)))
        stdin.flush()
        for _ in range(len(names) + 1):
            stdout.readline()
        time.sleep(1.0)  # past HEAD mode's note on uncommitted changes (0.5 s after start)
        a = cpu(proc.pid)
        time.sleep(seconds)
        b = cpu(proc.pid)
        idle = sum(b.values()) - sum(a.values())
        payload = b"".join(get(10**6 + i, names[i % len(names)]) for i in range(n))

        def write() -> None:
            stdin.write(payload)
            stdin.flush()

        writer = threading.Thread(target=write)
        a = cpu(proc.pid)
        writer.start()
        for _ in range(n):
            stdout.readline()
        b = cpu(proc.pid)
        writer.join()
        spent = sorted((b[t] - a.get(t, 0) for t in b), reverse=True)
        return idle / seconds / 1e6, spent[0] / n / 1e3, sum(spent[1:]) / n / 1e3
    finally:
        stdin.close()
        proc.wait(timeout=60)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--keep", type=Path, required=True)
    ap.add_argument("--tree", action="append", required=True, help="LABEL=TREE")
    ap.add_argument("--size", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--gets", type=int, default=20000)
    args = ap.parse_args()
    trees = {label: Path(path) for label, path in (t.split("=", 1) for t in args.tree)}
    names = [p["name"] for p in json.loads((args.keep / f"set{args.size}.json").read_text())]
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"follow_poll {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {args.size} "
          f"prompts; {args.rounds} rounds; load average {load} at start\n", flush=True)
    got: dict[str, list[tuple[float, float, float]]] = {label: [] for label in trees}
    for _ in range(args.rounds):
        for label, tree in trees.items():
            got[label].append(one(tree, args.keep, args.size, names, args.seconds, args.gets))
    print("| serve PKG from | idle CPU, ms a second | answering thread, µs a get "
          "| other threads, µs a get |\n| --- | ---: | ---: | ---: |")
    for label, rows in got.items():
        cells = [" / ".join(f"{r[i]:.2f}" for r in rows)
                 + f" (median {statistics.median(r[i] for r in rows):.2f})" for i in range(3)]
        print(f"| {label} | " + " | ".join(cells) + " |")
    print("\nload average at the end: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
