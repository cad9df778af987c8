"""Instructions per pipelined ``prompts/get`` through the whole stdio path, in one thread.

``get_instructions.py`` counts the serve core (``Server.handle``) alone; the subprocess
count of ``floor_instructions.py`` has serve's other threads in it (the stdio worker and
the main thread waiting on it, the render watchdog), whose wake-ups under valgrind fall
differently in every run. This script runs the stdio transport's own read-answer-write
loop (``transports.stdio._Loop.run``: reading the lines, parsing, answering, encoding,
holding and writing the replies) in the main thread, on a file of requests as its input
and ``/dev/null`` as its output, so the main thread's count is the whole per-request path
of ``serve --bundle`` but the process start. Run it under callgrind twice, with N and
N + 200 gets, and divide the main thread's difference by 200::

    PYTHONHASHSEED=0 valgrind --tool=callgrind --separate-threads=yes \\
        python benchmarks/stdio_instructions.py N BUNDLE [--cycle 20]

(``--cycle K``: the gets cycle over the first K prompts, each asked once before the
counted ones; with ``PYTHONPATH=<another checkout>`` it measures that checkout.)
``--run`` does both runs and prints the figure (needs valgrind).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path


def line(obj: object) -> bytes:
    return (json.dumps(obj, separators=(",", ":")) + "\n").encode()


def requests(names: list[str], n: int, arguments: dict[str, str]) -> bytes:
    head = line({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "stdio_instructions", "version": "1"}}})
    head += line({"jsonrpc": "2.0", "method": "notifications/initialized"})
    total = len(names) + n
    return head + b"".join(
        line({"jsonrpc": "2.0", "id": 2 + i, "method": "prompts/get",
              "params": {"name": names[i % len(names)], "arguments": arguments}})
        for i in range(total))


def serve(n: int, bundle_path: Path, cycle: int, *, core: bool = False,
          arguments: dict[str, str] | None = None, skip: int = 0) -> None:
    from promptops.pipeline.bundle import load_bundle
    from promptops.serve.catalog import Catalog
    from promptops.serve.server import Server
    from promptops.serve.transports.stdio import Output, _Loop

    bundle = load_bundle(bundle_path)
    # The longest render deadline the format allows: under valgrind (~50x slower) on a busy
    # machine, a first get that compiles its templates can pass the default 2 s, and a
    # timed-out get costs other instructions than a rendered one (the counts then differ
    # from run to run). Replies that are errors are counted and reported.
    bundle["package"]["limits"] = {"renderTimeoutMs": 10_000}  # type: ignore[typeddict-unknown-key]
    # The render watchdog wakes every POLL_S of wall time, and each wake-up takes the GIL
    # from the main thread: under valgrind (~50x slower) and load that is thousands of
    # instructions a get, more the busier the machine. Here it sleeps for the whole run.
    from promptops.sandbox import watchdog

    watchdog.POLL_S = 3600.0
    names = [p["name"] for p in bundle["prompts"]][skip:skip + cycle]
    with tempfile.TemporaryFile() as f, tempfile.NamedTemporaryFile() as replies:
        f.write(requests(names, n, arguments or {"topic": "x"}))
        f.seek(0)
        out_fd = os.open(replies.name, os.O_WRONLY)
        server = Server(Catalog([bundle]))
        out = Output(out_fd)
        session = server.open(out.send)
        if core:  # the serve core alone, on messages parsed before (get_instructions.py's)
            for message in [json.loads(x) for x in f.read().splitlines()]:
                server.handle(session, message)
            return
        _Loop(server, session, out, f.fileno()).run()
        out.finish(server.close(session))
        errors = sum(1 for x in Path(replies.name).read_bytes().splitlines()
                     if b'"error":' in x[:40])
        print(f"error replies: {errors}", file=sys.stderr)


def counted(n: int, bundle: Path, cycle: int, work: Path, *, core: bool,
            arguments: dict[str, str]) -> int:
    """The main thread's instructions of one run under callgrind."""
    for old in glob.glob(str(work / "cg.*")):
        os.unlink(old)
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    done = subprocess.run(["valgrind", "--tool=callgrind", "--separate-threads=yes",
                           f"--callgrind-out-file={work}/cg.%p", sys.executable, __file__,
                           str(n), str(bundle), "--cycle", str(cycle),
                           "--arguments", json.dumps(arguments),
                           *(["--core"] if core else [])],
                          check=True, env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    errors = [x for x in done.stderr.splitlines() if x.startswith("error replies: ")]
    if errors and errors[-1] != "error replies: 0":
        print(f"warning: {errors[-1]} (a timed-out get counts otherwise)", file=sys.stderr)
    main = [p for p in glob.glob(str(work / "cg.*")) if re.search(r"-0*1$", p)]
    text = Path(main[0]).read_text(encoding="utf-8", errors="replace")
    return next(int(x.split()[1]) for x in text.splitlines()
                if x.startswith(("summary:", "totals:")))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("n", type=int)
    ap.add_argument("bundle", type=Path)
    ap.add_argument("--cycle", type=int, default=20)
    ap.add_argument("--skip", type=int, default=0, help="cycle from the prompt after this many")
    ap.add_argument("--arguments", type=json.loads, default={"topic": "x"},
                    help="the gets' arguments, a JSON object (default: the floor set's)")
    ap.add_argument("--run", action="store_true", help="run N and N+200 under callgrind")
    ap.add_argument("--core", action="store_true",
                    help="Server.handle alone on parsed messages (no stdin, parse, encode, write)")
    args = ap.parse_args()
    if not args.run:
        serve(args.n, args.bundle, args.cycle, core=args.core, arguments=args.arguments,
              skip=args.skip)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        a = counted(args.n, args.bundle, args.cycle, Path(tmp), core=args.core,
                    arguments=args.arguments)
        b = counted(args.n + 200, args.bundle, args.cycle, Path(tmp), core=args.core,
                    arguments=args.arguments)
    print(f"main thread: {a:,} ({args.n} gets), {b:,} ({args.n + 200} gets): "
          f"{(b - a) / 200:,.0f} instructions per pipelined get"
          f"{' (the core alone, on parsed messages)' if args.core else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
