"""CPU per `prompts/get` with usage counting and tracing off and on (issue 29).

In process, through `Server.handle` (the code every transport calls), cycling the
prompts of a generated package; `time.process_time` per get, best of --rounds:

* off:      no `Usage` attached (stdio, and the baseline)
* usage:    the per-prompt counters of `serve --http`
* tracing:  counters plus an OpenTelemetry span per request and a child render span,
            every request sampled, exported over OTLP/HTTP (batched) to a real `rotel`
            collector (started here, blackhole exporter); the export thread's encoding
            and sending count too (process time), and the queue is flushed inside the
            measured time

With ``--before CHECKOUT`` the same measurement also runs (in a subprocess, rounds
interleaved with ours) with another checkout's ``promptops`` on ``PYTHONPATH``: e.g. the
commit before the span recorder, whose tracing was the OpenTelemetry SDK's tracer:

    python benchmarks/usage_bench.py --prompts 100 --n 20000 --rounds 3 --before /work/main
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def _bundle(n: int) -> object:
    from genpkg import generate  # type: ignore[import-not-found]

    from promptops.pipeline.bundle import load_bundle

    tmp = Path(tempfile.mkdtemp())
    root = generate(n, tmp / "pkg")
    dist = tmp / "dist"
    subprocess.run([sys.executable, "-m", "promptops", "build", str(root), "--worktree",
                    "--no-lint", "--output", str(dist)], check=True, capture_output=True)
    return load_bundle(next(dist.glob("*.json")))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run(server: object, names: list[str], n: int, flush: object = None) -> float:
    from promptops.serve.server import Server

    assert isinstance(server, Server)
    session = server.open(lambda m: None)
    server.handle(session, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"}}})
    msgs = [{"jsonrpc": "2.0", "id": i, "method": "prompts/get",
             "params": {"name": names[i % len(names)], "arguments": {"topic": "x"}}}
            for i in range(n)]
    start = time.process_time()
    for m in msgs:
        server.handle(session, m)
    if callable(flush):
        flush()  # the spans still queued are encoded and sent inside the measured time
    return (time.process_time() - start) / n


def _flush(tracing: object) -> None:
    """Export every queued span now (ours: drain the queue; the SDK's: force_flush)."""
    exporter = getattr(tracing, "exporter", None)
    if exporter is not None:
        exporter._drain(time.monotonic() + 60)
    else:
        tracing.provider.force_flush()  # type: ignore[attr-defined]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--prompts", type=int, default=100)
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--modes", default="off,usage,tracing")
    ap.add_argument("--before", type=Path, help="also measure tracing with this checkout")
    args = ap.parse_args()
    from promptops.serve.catalog import Catalog
    from promptops.serve.server import Server
    from promptops.serve.usage import Usage

    modes = args.modes.split(",")
    bundle = _bundle(args.prompts)
    names = [p["name"] for p in bundle["prompts"]]  # type: ignore[index]
    collector = None
    tracing = None
    try:
        if "tracing" in modes:
            try:
                import rotel

                from promptops.serve.tracing import Tracing
            except ImportError:
                print("tracing: skipped (pip install 'promptops-mcp[otel]' rotel)")
                modes.remove("tracing")
        if "tracing" in modes:
            agent = Path(rotel.__file__).with_name("rotel-agent")
            http_port, grpc_port = _free_port(), _free_port()
            collector = subprocess.Popen(
                [str(agent), "start", "--exporter", "blackhole", "--otlp-http-endpoint",
                 f"127.0.0.1:{http_port}", "--otlp-grpc-endpoint", f"127.0.0.1:{grpc_port}"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = f"http://127.0.0.1:{http_port}"
            time.sleep(1)
            tracing = Tracing()
        results: dict[str, float] = {}
        for _ in range(args.rounds):
            for label in modes:
                server = Server(Catalog([bundle]))  # type: ignore[list-item]
                if label != "off":
                    server.usage = Usage(tracing=tracing if label == "tracing" else None)
                flush = (lambda: _flush(tracing)) if label == "tracing" else None
                got = _run(server, names, args.n, flush)
                results[label] = min(results.get(label, float("inf")), got)
            if args.before is not None:
                out = subprocess.run(
                    [sys.executable, __file__, "--prompts", str(args.prompts), "--n",
                     str(args.n), "--rounds", "1", "--modes", "tracing"],
                    env={**os.environ, "PYTHONPATH": str(args.before.resolve())},
                    capture_output=True, text=True, check=True, cwd=args.before)
                got = float(out.stdout.split()[1]) / 1e6
                results["before"] = min(results.get("before", float("inf")), got)
        for label, best in results.items():
            name = f"tracing ({args.before})" if label == "before" else label
            print(f"{label:8} {best * 1e6:8.2f} µs CPU per get"
                  + (f"  ({(best / results['off'] - 1) * 100:+.1f}% vs off)"
                     if label != "off" and "off" in results else "")
                  + (f"  [{name}]" if label == "before" else ""))
    finally:
        if tracing is not None:
            tracing.shutdown()
        if collector is not None:
            collector.terminate()
            collector.wait(10)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
