"""CPU time of a whole stdio start, floor against ``serve`` of two checkouts, interleaved.

``floor_bench.py`` measures the cold start as wall time from spawn to the ``initialize``
reply; on a shared machine that swings with the load by more than a start's changes. The
CPU a process spends (user + system, from ``wait4``) swings far less. Each round spawns
every server once, in a rotating order: the floor (``floor/srv_floor.py``), ``serve PKG``
(repository mode, from the build cache) and ``serve --bundle`` for each checkout, writes
one ``initialize``, reads the reply, closes stdin and reaps the process. The figure is the
whole process, exit included (the floor's exit frees its Jinja2 environment, ours the
bundle), so it complements ``floor_instructions.py --what cold`` (instructions to the
reply) rather than replacing the wall-clock figure of ``floor_bench.py``.

The packages are ``floor_instructions.py``'s: run it once with ``--keep DIR`` (its
``setN.json``, ``pkgN`` with a filled build cache, and ``pkgN-dist``). Every server runs
with the bytecode cache in DIR/pycache, as there.

Usage: python benchmarks/start_cpu.py --keep DIR --before TREE [--after TREE]
[--size 1000] [--rounds 11]   (TREE: a checkout's root, put first on PYTHONPATH; --after
defaults to this checkout)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
FLOOR = HERE / "floor"
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "start_cpu", "version": "1"}}}


def servers(keep: Path, size: int, trees: dict[str, Path]) -> dict[str, tuple[str, list[str]]]:
    """label -> (PYTHONPATH, argv)."""
    py = sys.executable
    bundle = next((keep / f"pkg{size}-dist").glob("*.bundle.json"))
    out = {"floor": (str(FLOOR), [py, str(FLOOR / "srv_floor.py"), "--page-size", "100"])}
    for name, tree in trees.items():
        serve = [py, "-m", "promptops", "serve"]
        out[f"repo {name}"] = (str(tree), [*serve, str(keep / f"pkg{size}")])
        out[f"bundle {name}"] = (str(tree), [*serve, "--bundle", str(bundle)])
    return out


def one_start(argv: list[str], env: dict[str, str]) -> float:
    """CPU milliseconds (user + system) of one start answered and ended."""
    # cwd: `python -m` puts the working directory first on sys.path, so started from a
    # checkout's root every tree given would import that checkout's promptops instead
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=env, cwd=FLOOR)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
    proc.stdin.flush()
    reply = proc.stdout.readline()
    if b'"result"' not in reply:
        proc.kill()
        raise SystemExit(f"{argv}: no initialize result: {reply[:200]!r}")
    proc.stdin.close()
    proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return (usage.ru_utime + usage.ru_stime) * 1000


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--keep", type=Path, required=True, help="floor_instructions.py's --keep")
    ap.add_argument("--before", type=Path, required=True)
    ap.add_argument("--after", type=Path, default=HERE.parent)
    ap.add_argument("--size", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=11)
    args = ap.parse_args()
    keep = args.keep.resolve()
    env = {**os.environ, "PROMPTSET": str(keep / f"set{args.size}.json"),
           "PYTHONPYCACHEPREFIX": str(keep / "pycache")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    table = servers(keep, args.size, {"before": args.before.resolve(),
                                      "after": args.after.resolve()})
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"start_cpu {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {args.size} "
          f"prompts; {args.rounds} rounds; load average {load} at start")
    cpu: dict[str, list[float]] = {label: [] for label in table}
    labels = list(table)
    for r in range(args.rounds):
        for label in labels[r % len(labels):] + labels[:r % len(labels)]:
            path, argv = table[label]
            cpu[label].append(one_start(argv, {**env, "PYTHONPATH": path}))
    floor = statistics.median(cpu["floor"])
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} at the end\n")
    print("| server | CPU ms of a whole start (median) | to the floor | min |")
    print("| --- | ---: | ---: | ---: |")
    for label, values in cpu.items():
        mid = statistics.median(values)
        print(f"| {label} | {mid:.1f} | {mid / floor:.2f}x | {min(values):.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
