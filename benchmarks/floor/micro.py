"""In-process CPU per pipelined ``prompts/get``: promptops' stdio loop against the floor's.

The subprocess benchmark (``floor_bench.py``) reads CPU time from /proc in 10 ms ticks;
this one runs both loops in one process, on the same file of pipelined requests, with
``time.process_time`` around each pass and the passes interleaved (floor, ours, floor,
...), so a change of a microsecond shows. Both read the requests from a file descriptor
and write their replies to /dev/null, one write per reply as each does over a pipe, so
the figures include reading, parsing, rendering, encoding and the write system call,
but not a reader on the other end of a pipe.

Usage: python benchmarks/floor/micro.py BUNDLE PROMPTSET [--n 20000] [--rounds 5]
[--pipe] [--profile]  (BUNDLE: the built bundle of PROMPTSET as a package, as floor_bench.py makes
it; ``--keep DIR`` there leaves both behind)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def requests(prompts: list[dict[str, object]], n: int) -> bytes:
    """``n`` pipelined gets cycling over the prompts, as the harness writes them."""
    out = []
    for i in range(n):
        p = prompts[i % len(prompts)]
        out.append(json.dumps({"jsonrpc": "2.0", "id": i + 2, "method": "prompts/get",
                               "params": {"name": p["name"], "arguments": {"topic": "x"}}},
                              separators=(",", ":")))
    return ("\n".join(out) + "\n").encode()


def handshake() -> bytes:
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "micro", "version": "1"}}}
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    return (json.dumps(init) + "\n" + json.dumps(note) + "\n").encode()


def sink(*, pipe: bool) -> tuple[int, subprocess.Popen[bytes] | None]:
    """Where replies go: /dev/null, or a pipe that a ``cat`` reads (system calls as real)."""
    if not pipe:
        return os.open(os.devnull, os.O_WRONLY), None
    cat = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    assert cat.stdin is not None
    return os.dup(cat.stdin.fileno()), cat


def ours(bundle: Path, out_fd: int):
    from promptops.pipeline.bundle import load_bundle
    from promptops.serve.catalog import Catalog
    from promptops.serve.server import Server
    from promptops.serve.transports import stdio

    server = Server(Catalog([load_bundle(bundle)]))

    def run(path: str) -> None:
        fd = os.open(path, os.O_RDONLY)
        try:
            out = stdio.Output(out_fd)
            loop = stdio._Loop(server, server.open(out.send), out, fd)
            loop.run()
        finally:
            os.close(fd)
    return run


def floor(promptset: Path, out_fd: int):
    """The floor's main loop, run on a file (srv_floor.py reads sys.stdin at import)."""
    sys.path.insert(0, str(HERE))
    os.environ["PROMPTSET"] = str(promptset)
    import srv_floor

    def run(path: str) -> None:
        with open(path, "rb") as f, open(out_fd, "wb", closefd=False) as null:
            stdin, srv_floor.out = sys.stdin, null
            sys.stdin = type("In", (), {"buffer": f})()  # type: ignore[assignment]
            try:
                srv_floor.main()
            finally:
                sys.stdin = stdin
    return run


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bundle", type=Path)
    ap.add_argument("promptset", type=Path)
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--profile", action="store_true", help="cProfile one pass of ours")
    ap.add_argument("--pipe", action="store_true",
                    help="write the replies to a pipe read by `cat` instead of /dev/null")
    args = ap.parse_args()
    prompts = json.loads(args.promptset.read_text())
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "requests.jsonl")
        Path(path).write_bytes(handshake() + requests(prompts, args.n))
        out_fd, cat = sink(pipe=args.pipe)
        runs = {"floor": floor(args.promptset, out_fd), "ours": ours(args.bundle, out_fd)}
        for run in runs.values():  # compile every template once: steady state only
            run(path)
        if args.profile:
            import cProfile
            import pstats

            cProfile.runctx("r(path)", {}, {"r": runs["ours"], "path": path}, tmp + "/p")
            pstats.Stats(tmp + "/p").sort_stats("tottime").print_stats(30)
            return 0
        best: dict[str, float] = {}
        for rnd in range(args.rounds):
            line = []
            for label, run in runs.items():
                t = time.process_time()
                run(path)
                us = (time.process_time() - t) / args.n * 1e6
                best[label] = min(best.get(label, us), us)
                line.append(f"{label} {us:6.2f}")
            print(f"round {rnd + 1}: " + "   ".join(line) + " us/get", flush=True)
        print(f"best: floor {best['floor']:.2f} us, ours {best['ours']:.2f} us, "
              f"ratio {best['ours'] / best['floor']:.2f}x")
        os.close(out_fd)
        if cat is not None:
            cat.stdin.close()  # type: ignore[union-attr]
            cat.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
