"""`promptops serve --http` next to the HTTP anchors, in one run, plus listen fan-out.

Two measurements:

1. **Load** (the team's load generator, vendored as ``floor/http/http_bench.py``, and its
   anchor servers): the 1,000-prompt promptset of ``floor/gen_promptset.py``,
   turned into a promptops package committed in git, is served by ``promptops serve
   --http`` in both eras (session and ``@modern``), interleaved with the anchors (a bare
   ASGI app on uvicorn with and without httptools+uvloop, the Python SDK in SSE, JSON and
   2026 modes, and optionally the TypeScript SDK v1). Reported per server and concurrency:
   server CPU per request, req/s, p50/p99. Compare CPU per request, not req/s: the load
   generator shares the cores.
2. **Fan-out**: N ``subscriptions/listen`` streams (one aiohttp connection each) are opened
   on a server following the package; a commit is made; the time from the end of ``git
   commit`` to the last stream's ``list_changed`` is the time for a commit to reach N
   listeners (it includes noticing the ref, building the commit and the swap).

Usage: python benchmarks/http_bench.py [--bench-dir DIR] [--rounds 3] [--n 2000]
       [--conc 1,16,64] [--listeners 1000] [--ts] [--write-docs] [--docs docs/benchmarks.md]
``--bench-dir`` holds the load generator and anchors (default ``benchmarks/floor``: the
team's bench tools vendored into this repository, ``gen_promptset.py`` and ``promptset.py``
beside ``http/``); a folder without them runs the fan-out only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SEP = "\n=====\n"
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}
SECTION = "## HTTP server (`serve --http`)"
PROMPTOPS = [sys.executable, "-m", "promptops"]


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com",
                    *args], cwd=cwd, check=True, capture_output=True)


def make_package(promptset: Path, out: Path) -> Path:
    """The promptset as a promptops package (assistant = template head, user = tail), in git."""
    (out / "prompts").mkdir(parents=True, exist_ok=True)
    (out / "promptops.yaml").write_text("name: http-bench\nversion: 1.0.0\n")
    for p in json.loads(promptset.read_text()):
        head, tail = p["template"].split(SEP, 1)
        args = [{"name": a["name"], "description": a["description"], "required": a["required"],
                 **({} if a["required"] else {"default": "neutral"})} for a in p["arguments"]]
        doc = {"description": p["description"], "arguments": args,
               "messages": [{"role": "assistant", "text": head}, {"role": "user", "text": tail}]}
        (out / "prompts" / f"{p['name']}.prompt.yaml").write_text(json.dumps(doc) + "\n")
    _git("init", "-q", "-b", "main", cwd=out)
    _git("add", "-A", cwd=out)
    _git("commit", "-qm", "promptset", cwd=out)
    return out


def load(args: argparse.Namespace, bench: Path, pkg: Path, promptset: Path,
         work: Path) -> list[dict[str, Any]]:
    h = bench / "http"
    py = sys.executable
    env = f"env PROMPTSET={promptset}"
    exe = shutil.which("promptops", path=str(Path(sys.executable).parent)) or "promptops"
    ours = f"{exe} serve --http --port {{port}} --page-size 1000 --no-access-log {pkg}"
    servers = [
        f"floor={env} {py} {h}/srv_floor_http.py --port {{port}}",
        f"floor-httptools={env} {py} {h}/srv_floor_http.py --http httptools --loop uvloop "
        "--port {port}",
        f"py-sse={env} {py} {h}/srv_py_sdk_http.py --port {{port}}",
        f"py-json={env} {py} {h}/srv_py_sdk_http.py --json --port {{port}}",
        f"py-2026@modern={env} {py} {h}/srv_py_sdk_http.py --json --port {{port}}",
        f"promptops={ours}",
        f"promptops-2026@modern={ours}",
    ]
    if args.ts:
        node_path = args.node_modules or str(Path.home() / ".cache/promptops-tests/node/"
                                             "node_modules")
        servers.append(f"ts-json={env} NODE_PATH={node_path} node {h}/srv_ts_sdk_http.mjs "
                       "--json --port {port}")
    jsonl = work / "results.jsonl"
    cmd = [py, str(h / "http_bench.py"), "--rounds", str(args.rounds), "--n", str(args.n),
           "--conc", args.conc, "--jsonl", str(jsonl), "--md", str(work / "table.md")]
    for s in servers:
        cmd += ["--server", s]
    print(f"load: {len(servers)} servers, {args.rounds} round(s), n={args.n}, C={args.conc}",
          file=sys.stderr, flush=True)
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=work)
    if done.returncode != 0:
        sys.stderr.write(done.stdout[-3000:] + done.stderr[-3000:])
        raise SystemExit("the load generator failed (a server FAILed its checks)")
    if args.jsonl_out:
        shutil.copy(jsonl, args.jsonl_out)
    return [json.loads(line) for line in jsonl.read_text().splitlines() if line.strip()]


def summarise(records: list[dict[str, Any]]) -> dict[tuple[str, int], dict[str, float]]:
    """Median per (server, concurrency) of the phases' figures."""
    by: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for r in records:
        conc, label = r.get("conc"), r.get("server")
        if r.get("phase") != "load" or conc is None or label is None:
            continue
        by.setdefault((str(label), int(conc)), []).append(r)
    out: dict[tuple[str, int], dict[str, float]] = {}
    for where, rs in by.items():
        fig: dict[str, float] = {}
        for name, field in (("server_cpu_us_per_req", "srv_cpu_us"), ("rps", "rps"),
                            ("p50_ms", "p50_ms"), ("p99_ms", "p99_ms")):
            vals = [float(r[field]) for r in rs if r.get(field) is not None]
            if vals:
                fig[name] = statistics.median(vals)
        out[where] = fig
    return out


# ---- fan-out to N listen streams ------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _cpu_of(pid: int) -> float | None:
    """utime+stime of process ``pid`` in seconds (Linux /proc; None elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _fanout_once(url: str, n: int, pkg: Path, i: int,
                       pid: int | None = None) -> tuple[float, float, float | None]:
    import aiohttp

    acked = 0
    got: list[float] = []
    all_acked, all_got = asyncio.Event(), asyncio.Event()
    body = json.dumps({"jsonrpc": "2.0", "id": "l", "method": "subscriptions/listen",
                       "params": {"notifications": {"promptsListChanged": True},
                                  "_meta": META}}).encode()
    headers = {"content-type": "application/json", "accept": "application/json, "
               "text/event-stream", "mcp-protocol-version": "2026-07-28",
               "mcp-method": "subscriptions/listen"}

    async def one(session: aiohttp.ClientSession) -> None:
        nonlocal acked
        async with session.post(url, data=body, headers=headers) as resp:
            async for raw in resp.content:
                line = raw.decode().strip()
                if not line.startswith("data: "):
                    continue
                msg = json.loads(line[6:])
                if msg.get("method") == "notifications/subscriptions/acknowledged":
                    acked += 1
                    if acked == n:
                        all_acked.set()
                elif msg.get("method") == "notifications/prompts/list_changed":
                    got.append(time.perf_counter())
                    if len(got) == n:
                        all_got.set()
                    return

    conn = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=conn, timeout=aiohttp.ClientTimeout(
            total=None, sock_read=120)) as session:
        opened = time.perf_counter()
        tasks = [asyncio.create_task(one(session)) for _ in range(n)]
        await asyncio.wait_for(all_acked.wait(), 120)
        open_s = time.perf_counter() - opened
        name = f"prompts/fanout_{i}.prompt.yaml"
        (pkg / name).write_text(json.dumps({"description": f"fan-out {i}", "messages": [
            {"role": "user", "text": f"fan-out {i}"}]}) + "\n")
        await asyncio.to_thread(_git, "add", "-A", cwd=pkg)
        cpu_before = _cpu_of(pid) if pid is not None else None
        await asyncio.to_thread(_git, "commit", "-qm", f"fanout {i}", cwd=pkg)
        committed = time.perf_counter()
        await asyncio.wait_for(all_got.wait(), 120)
        reach = max(got) - committed
        cpu_after = _cpu_of(pid) if pid is not None else None
        cpu = cpu_after - cpu_before if cpu_after is not None and cpu_before is not None \
            else None
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return open_s, reach, cpu


def fanout(pkg: Path, n: int, runs: int, work: Path, args_warm: float = 5.0) -> dict[str, Any]:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    log = (work / "fanout.log").open("wb")
    proc = subprocess.Popen([*PROMPTOPS, "serve", "--http", f"127.0.0.1:{port}", str(pkg),
                             "--max-streams", str(n + 10), "--no-access-log"],
                            stdout=subprocess.DEVNULL, stderr=log, start_new_session=True)
    try:
        import urllib.request

        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1)
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    log.flush()
                    tail = (work / "fanout.log").read_text(errors="replace")[-2000:]
                    raise SystemExit(f"fan-out server did not start:\n{tail}") from None
                time.sleep(0.05)
        time.sleep(args_warm)  # past the follower's warm-up, as a long-running server is
        results = [asyncio.run(_fanout_once(url, n, pkg, i, proc.pid)) for i in range(runs)]
    finally:
        if proc.poll() is None:  # (one that died says why above, not "no such process")
            os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(30)
        log.close()
    reach = [r for _, r, _ in results]
    cpus = [c for _, _, c in results if c is not None]
    return {"listeners": n, "runs": runs, "open_s": statistics.median(o for o, _, _ in results),
            "reach_ms": [round(r * 1000, 1) for r in reach],
            "median_ms": round(statistics.median(reach) * 1000, 1),
            # the server's CPU from the commit to the last list_changed (10 ms ticks)
            "server_cpu_ms": round(statistics.median(cpus) * 1000) if cpus else None}


# ---- report ---------------------------------------------------------------------------------
def report(figs: dict[tuple[str, int], dict[str, float]], fan: dict[str, Any],
           args: argparse.Namespace) -> str:
    cpu = (f", server CPU {fan['server_cpu_ms']} ms per commit (median)"
           if fan.get("server_cpu_ms") is not None else "")
    lines = [SECTION, "",
             f"Measured {time.strftime('%Y-%m-%d')} with `python benchmarks/http_bench.py "
             f"--rounds {args.rounds} --n {args.n} --conc {args.conc} --listeners "
             f"{args.listeners}` on {os.cpu_count()} cores; every server in one interleaved "
             "run of the shared load generator (1,000 prompts, `prompts/get`, medians of the "
             "rounds). Server CPU is utime+stime of the server process per request; the load "
             "generator runs on the same cores, so compare CPU per request, not req/s.", ""]
    if figs:
        concs = sorted({c for _, c in figs})
        lines += ["| server | " + " | ".join(f"C={c}: CPU µs/req, req/s, p50/p99 ms"
                                            for c in concs) + " |",
                  "|---|" + "---|" * len(concs)]
        for label in sorted({label for label, _ in figs}, key=_order):
            cells = []
            for c in concs:
                f = figs.get((label, c), {})
                cells.append(f"{f.get('server_cpu_us_per_req', float('nan')):.0f}, "
                             f"{f.get('rps', float('nan')):.0f}, "
                             f"{f.get('p50_ms', float('nan')):.2f}/"
                             f"{f.get('p99_ms', float('nan')):.2f}")
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
        lines += ["", *targets(figs)]
    lines += ["", f"A commit reaching {fan['listeners']:,} open `subscriptions/listen` streams "
              f"(from the end of `git commit` to the last stream's `list_changed`, including "
              f"noticing the ref, building the commit and swapping): median "
              f"**{fan['median_ms']:.0f} ms** over {fan['runs']} commits "
              f"({', '.join(f'{r:.0f}' for r in fan['reach_ms'])} ms){cpu}; opening and "
              f"acknowledging the {fan['listeners']:,} streams took {fan['open_s']:.2f} s.", ""]
    return "\n".join(lines)


def _order(label: str) -> tuple[int, str]:
    return (0 if label.startswith("promptops") else 1, label)


def targets(figs: dict[tuple[str, int], dict[str, float]]) -> list[str]:
    out = ["Targets at C=16 (issue 18): server CPU per request at most 1.5x the uvicorn "
           "floor's (httptools+uvloop) and at most a quarter of the Python SDK's; p99 under "
           "10 ms."]
    floor = figs.get(("floor-httptools", 16), {}).get("server_cpu_us_per_req")
    sdk = min((f.get("server_cpu_us_per_req", 1e9) for (label, c), f in figs.items()
               if label.startswith("py-") and c == 16), default=None)
    for label in ("promptops", "promptops-2026"):
        f = figs.get((label, 16))
        if not f or floor is None or sdk is None:
            continue
        cpu, p99 = f["server_cpu_us_per_req"], f["p99_ms"]
        out.append(f"* {label}: {cpu:.0f} µs/req = {cpu / floor:.2f}x the floor "
                   f"({'met' if cpu <= 1.5 * floor else 'NOT met'}), {cpu / sdk:.2f}x the "
                   f"cheapest Python SDK mode ({'met' if cpu <= sdk / 4 else 'NOT met'}); "
                   f"p99 {p99:.2f} ms ({'met' if p99 < 10 else 'NOT met'}).")
    return out


def write_docs(path: Path, section: str) -> None:
    text = path.read_text() if path.exists() else "# Benchmarks\n"
    pattern = re.compile(re.escape(SECTION) + r".*?(?=\n## |\Z)", re.S)
    text = pattern.sub(section.rstrip() + "\n", text) if pattern.search(text) else \
        text.rstrip() + "\n\n" + section
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bench-dir", type=Path, default=ROOT / "benchmarks" / "floor")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--conc", default="1,16,64")
    ap.add_argument("--listeners", type=int, default=1000)
    ap.add_argument("--fanout-runs", type=int, default=3)
    ap.add_argument("--prompts", type=int, default=1000)
    ap.add_argument("--ts", action="store_true", help="add the TypeScript SDK v1 anchor")
    ap.add_argument("--node-modules", help="NODE_PATH for --ts")
    ap.add_argument("--warm", type=float, default=5.0,
                    help="seconds the fan-out server runs before the first commit")
    ap.add_argument("--skip-load", action="store_true", help="fan-out only")
    ap.add_argument("--jsonl-out", type=Path, help="keep the load generator's records here")
    ap.add_argument("--write-docs", action="store_true")
    ap.add_argument("--docs", type=Path, default=ROOT / "docs" / "benchmarks.md")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="po-http-bench-") as tmp:
        work = Path(tmp)
        gen = args.bench_dir / "gen_promptset.py"
        figs: dict[tuple[str, int], dict[str, float]] = {}
        promptset = work / "promptset.json"
        if gen.exists():
            subprocess.run([sys.executable, str(gen), str(args.prompts), str(promptset)],
                           check=True, capture_output=True)
        else:
            print(f"no load generator in {args.bench_dir}: fan-out only", file=sys.stderr)
            promptset.write_text(json.dumps([{
                "name": f"prompt_{i:04d}", "description": f"prompt {i}",
                "arguments": [{"name": "topic", "description": "t", "required": True},
                              {"name": "tone", "description": "t", "required": False}],
                "template": "Be {{ tone }}." + SEP + "About {{ topic }}."}
                for i in range(args.prompts)]))
        pkg = make_package(promptset, work / "pkg")
        if gen.exists() and not args.skip_load:
            figs = summarise(load(args, args.bench_dir, pkg, promptset, work))
        fan = fanout(pkg, args.listeners, args.fanout_runs, work, args.warm)
        section = report(figs, fan, args)
        print(section)
        if args.write_docs:
            write_docs(args.docs, section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
