"""Server CPU per pipelined ``prompts/get``, split into user and system time, A/B style.

``floor_bench.py`` answers issue 17's acceptance; this script is for comparing two
checkouts (or two builds) of ``promptops serve`` against the floor on a shared machine:
every ``LABEL=COMMAND`` server is spawned once per round, round-robin, handshaken, warmed
with one pass over all prompts, then sent ``--n`` gets at once by a writer thread while
the main thread reads the replies. The server's utime and stime come from /proc (10 ms
ticks, so use a large ``--n``), and each server's line shows every round's CPU per get
sorted (the low ones are the least disturbed by other work), the medians of user and
system time, pipelined req/s, cold start (spawn to the initialize reply) and peak RSS.
As in ``floor_bench.py``, every server runs with the bytecode cache on (a temporary
``PYTHONPYCACHEPREFIX``, filled by one untimed session per server). Standard library
only; Linux (/proc).

Usage (a before/after pair, as in docs/benchmarks.md):
  PROMPTSET=set1000.json PYTHONPATH=benchmarks/floor python benchmarks/floor/pipe_cpu.py \\
    "floor=python benchmarks/floor/srv_floor.py" \\
    "before=env PYTHONPATH=/path/to/old/checkout python -m promptops serve --bundle B.json" \\
    "after=python -m promptops serve --bundle B.json" [--n 40000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _ticks(pid: int) -> tuple[int, int]:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]), int(fields[12])  # utime, stime


def _hwm_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM"):
                return int(line.split()[1]) / 1024
    return 0.0


def _gets(prompts: list[dict[str, Any]], n: int, first_id: int) -> bytes:
    return b"".join(json.dumps({"jsonrpc": "2.0", "id": first_id + i, "method": "prompts/get",
                                "params": {"name": prompts[i % len(prompts)]["name"],
                                           "arguments": {"topic": "x"}}},
                               separators=(",", ":")).encode() + b"\n" for i in range(n))


class _Server:
    def __init__(self, command: str, env: dict[str, str]) -> None:
        self.t0 = time.perf_counter()
        self.proc = subprocess.Popen(shlex.split(command), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0,
                                     env=env)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.w, self.r = self.proc.stdin.fileno(), self.proc.stdout.fileno()

    def write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.w, view):]

    def replies(self, count: int, data: bytes = b"") -> None:
        """Write ``data`` from a thread (a pipe holds 64 KiB) and read ``count`` replies."""
        writer = threading.Thread(target=self.write_all, args=(data,))
        writer.start()
        seen = 0
        while seen < count:
            chunk = os.read(self.r, 1 << 20)
            if not chunk:
                raise SystemExit(f"the server closed stdout (exit {self.proc.poll()})")
            seen += chunk.count(b"\n")
        writer.join()

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(10)


def session(command: str, prompts: list[dict[str, Any]], n: int,
            env: dict[str, str]) -> dict[str, float]:
    srv = _Server(command, env)
    try:
        srv.replies(1, json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "pipe_cpu", "version": "1"}}}).encode() + b"\n")
        cold = (time.perf_counter() - srv.t0) * 1000
        srv.write_all(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        srv.replies(len(prompts), _gets(prompts, len(prompts), 1))  # compiles every template
        payload = _gets(prompts, n, len(prompts) + 1)
        u0, s0 = _ticks(srv.proc.pid)
        start = time.perf_counter()
        srv.replies(n, payload)
        elapsed = time.perf_counter() - start
        u1, s1 = _ticks(srv.proc.pid)
        rss = _hwm_mb(srv.proc.pid)
    finally:
        srv.close()
    per = 1e6 / TICK / n
    return {"user": (u1 - u0) * per, "sys": (s1 - s0) * per, "rps": n / elapsed, "cold": cold,
            "rss": rss}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("servers", nargs="+", metavar="LABEL=COMMAND")
    ap.add_argument("--n", type=int, default=40000, help="pipelined gets per session")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--max-prompts", type=int, default=1000,
                    help="gets cycle over the first M prompts of $PROMPTSET")
    args = ap.parse_args()
    with open(os.environ.get("PROMPTSET", "promptset_1000.json")) as f:
        prompts = json.load(f)[:args.max_prompts]
    servers = [s.split("=", 1) for s in args.servers]
    runs: dict[str, list[dict[str, float]]] = {label: [] for label, _ in servers}
    # as floor_bench.py: every server with the bytecode cache on, filled by an untimed spawn
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    cache = tempfile.TemporaryDirectory(prefix="pipe-cpu-pycache-")
    env["PYTHONPYCACHEPREFIX"] = cache.name
    for _, command in servers:
        session(command, prompts, 100, env)
    load = os.getloadavg() if hasattr(os, "getloadavg") else ()
    for _ in range(args.rounds):
        for label, command in servers:
            runs[label].append(session(command, prompts, args.n, env))
    cache.cleanup()
    print(f"--n {args.n} --rounds {args.rounds}; load average {load} at start, "
          f"{os.getloadavg() if hasattr(os, 'getloadavg') else ()} at the end")
    base = None
    for label, _ in servers:
        rs = runs[label]

        def median(key: str, rs: list[dict[str, float]] = rs) -> float:
            return sorted(r[key] for r in rs)[len(rs) // 2]

        cpu = sorted(r["user"] + r["sys"] for r in rs)
        mid = cpu[len(cpu) // 2]
        base = base or mid
        print(f"{label:12} CPU us/get {' '.join(f'{c:5.1f}' for c in cpu)}  median {mid:5.1f} "
              f"({mid / base:.2f}x; user {median('user'):4.1f} sys {median('sys'):3.1f})  "
              f"req/s {median('rps'):7.0f}  cold ms {median('cold'):6.1f}  "
              f"RSS MB {median('rss'):5.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
