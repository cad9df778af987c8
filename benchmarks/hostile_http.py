"""A well-behaved client of `promptops serve --http` while the server is under attack.

The acceptance figure of issue 23: with 500 connections sending their request heads
slowly (a byte a second, reconnecting whenever the server cuts them off) and a client
sending one 64 MB header (again and again, reconnecting after each refusal), a
well-behaved client's ``prompts/get`` p99 stays under 50 ms and the server's RSS grows
less than 20 MB. The attackers run in a child process of their own (its own event loop
and interpreter, so their work is not charged to the measuring client); the client sends
``prompts/get`` over one keep-alive connection, one at a time, first without attack
(the baseline) and then during it. The server's RSS is sampled from /proc throughout.

    python benchmarks/hostile_http.py [--slow 500] [--header-mb 64] [--requests 1000]
                                      [--prompts 100] [--seconds 20]

It prints the figures and whether each target was met (exit 0 either way: on a shared,
loaded machine the latencies are noise; re-run it idle for the figures that count).
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench_common import make_package, pct, promptops_cmd

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


# ---- the attacker process ---------------------------------------------------------------
async def _slow(port: int, stats: dict[str, int], stop: asyncio.Event) -> None:
    """One slow connection, sending a head a byte a second; reconnects when cut off."""
    head = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"s" * 10_000
    while not stop.is_set():
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            stats["refused"] += 1
            await asyncio.sleep(1)
            continue
        stats["opened"] += 1
        try:
            for byte in head:
                writer.write(bytes((byte,)))
                await writer.drain()
                try:
                    data = await asyncio.wait_for(reader.read(100), 1.0)
                except TimeoutError:
                    continue
                if data or reader.at_eof():  # a 408 (or a close): cut off
                    stats["cut"] += 1
                    break
                if stop.is_set():
                    break
        except OSError:
            stats["cut"] += 1
        finally:
            writer.close()


async def _big_header(port: int, size: int, stats: dict[str, int], stop: asyncio.Event) -> None:
    """One connection at a time sending a ``size``-byte header as fast as it can."""
    chunk = b"h" * (1 << 20)
    while not stop.is_set():
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            await asyncio.sleep(0.1)
            continue
        sent = 0
        try:
            writer.write(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ")
            while sent < size and not stop.is_set():
                writer.write(chunk)
                await writer.drain()
                sent += len(chunk)
            writer.write(b"\r\n\r\n")
            status = await asyncio.wait_for(reader.read(64), 30)
            stats["big_status_" + (status.split(b" ")[1].decode() if status else "closed")] += 1
        except (OSError, TimeoutError, IndexError):
            stats["big_cut"] += 1
        finally:
            stats["big_bytes_sent"] += sent
            writer.close()


async def _attack(port: int, slow: int, header_mb: int, seconds: float) -> dict[str, int]:
    from collections import defaultdict

    stats: dict[str, int] = defaultdict(int)
    stop = asyncio.Event()
    tasks = [asyncio.create_task(_slow(port, stats, stop)) for _ in range(slow)]
    tasks.append(asyncio.create_task(_big_header(port, header_mb << 20, stats, stop)))
    await asyncio.sleep(seconds)
    stop.set()
    await asyncio.wait(tasks, timeout=5)
    for t in tasks:
        t.cancel()
    return dict(stats)


def attacker_main(port: int, slow: int, header_mb: int, seconds: float) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, slow + 256)), hard))
    print(json.dumps(asyncio.run(_attack(port, slow, header_mb, seconds))), flush=True)


# ---- the well-behaved client -------------------------------------------------------------
def client_latencies(port: int, n: int, prompts: int, stop: threading.Event | None = None
                     ) -> list[float]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    out: list[float] = []
    for i in range(n):
        if stop is not None and stop.is_set():
            break
        name = f"task_{i % prompts:05d}"
        body = json.dumps({"jsonrpc": "2.0", "id": i, "method": "prompts/get", "params": {
            "name": name, "arguments": {"topic": f"t{i}"}, "_meta": META}})
        headers = {"content-type": "application/json", "accept": "application/json",
                   "mcp-protocol-version": "2026-07-28", "mcp-method": "prompts/get",
                   "mcp-name": name}
        started = time.perf_counter()
        conn.request("POST", "/mcp", body, headers)
        resp = conn.getresponse()
        data = resp.read()
        out.append(time.perf_counter() - started)
        if resp.status != 200 or b'"result"' not in data:
            raise SystemExit(f"bad reply {resp.status}: {data[:200]!r}")
    conn.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--slow", type=int, default=500)
    ap.add_argument("--header-mb", type=int, default=64)
    ap.add_argument("--requests", type=int, default=1000)
    ap.add_argument("--prompts", type=int, default=100)
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--attacker", type=int, metavar="PORT", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.attacker:
        attacker_main(args.attacker, args.slow, args.header_mb, args.seconds)
        return 0
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        pkg = make_package(args.prompts, Path(tmp))
        server = subprocess.Popen(
            [*promptops_cmd(), "serve", "--http", f"127.0.0.1:{port}", "--no-access-log",
             str(pkg)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            env={**os.environ, "XDG_CACHE_HOME": str(Path(tmp) / "cache")})
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    if server.poll() is not None or time.monotonic() > deadline:
                        raise SystemExit(f"server did not start: {server.stderr.read()!r}"
                                         if server.stderr else "server did not start") from None
                    time.sleep(0.1)
            client_latencies(port, 200, args.prompts)  # warm up every path
            base = client_latencies(port, args.requests, args.prompts)
            rss_before = rss_kb(server.pid)
            attacker = subprocess.Popen(
                [sys.executable, __file__, "--attacker", str(port), "--slow", str(args.slow),
                 "--header-mb", str(args.header_mb), "--seconds", str(args.seconds)],
                stdout=subprocess.PIPE, text=True)
            time.sleep(min(3.0, args.seconds / 4))  # let the slow connections pile up
            peak = [rss_before]
            done = threading.Event()

            def sample() -> None:
                while not done.is_set():
                    peak[0] = max(peak[0], rss_kb(server.pid))
                    time.sleep(0.05)

            sampler = threading.Thread(target=sample, daemon=True)
            sampler.start()
            under: list[float] = []
            while attacker.poll() is None and len(under) < args.requests * 20:
                under += client_latencies(port, 100, args.prompts)
            done.set()
            out, _ = attacker.communicate(timeout=60)
            stats: dict[str, Any] = json.loads(out.strip().splitlines()[-1]) if out else {}
        finally:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(30)
            except subprocess.TimeoutExpired:
                server.kill()
    p99_base, p99_under = pct(base, 0.99) * 1000, pct(under, 0.99) * 1000
    growth = (peak[0] - rss_before) / 1024
    print(f"attack: {args.slow} slow connections + a {args.header_mb} MB header, "
          f"{args.seconds:g} s; attacker saw {stats}")
    print(f"prompts/get without attack: n={len(base)} p50={pct(base, 0.5) * 1000:.2f} ms "
          f"p99={p99_base:.2f} ms")
    print(f"prompts/get under attack:   n={len(under)} p50={pct(under, 0.5) * 1000:.2f} ms "
          f"p99={p99_under:.2f} ms  (target < 50 ms: "
          f"{'met' if p99_under < 50 else 'NOT met'})")
    print(f"server RSS: {rss_before / 1024:.1f} MB before, {peak[0] / 1024:.1f} MB peak, "
          f"growth {growth:.1f} MB  (target < 20 MB: {'met' if growth < 20 else 'NOT met'})")
    print(f"load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
