"""Serve benchmark: ``promptops serve`` side by side with a server on the official MCP
Python SDK (``sdk_server.py``), over real pipes, on the same generated packages.

Servers, for each size (default 1,000 and 10,000 prompts):

* ``promptops --bundle``: ``promptops serve --bundle FILE`` (a built bundle);
* ``promptops repo``: ``promptops serve REPO`` on a commit already in the build cache
  (``.git/promptops``, filled by one untimed session before measuring; never cleared);
* ``SDK low-level``: ``sdk_server.py --bundle FILE``, the SDK's low-level ``Server``
  rendering with promptops' ``Renderer``, so only the protocol layer differs.

Per session (a fresh spawn): cold start (spawn to the initialize reply, protocol
2025-06-18), the whole paged prompts/list (first listing and the median of repeats),
sequential prompts/get over the first ``--max-gets`` prompts for ``--get-passes`` passes
(pass 1, which compiles templates, reported apart), ``--n`` pipelined prompts/get
written without waiting, then peak RSS (VmHWM from /proc) before stdin is closed.
Sessions are interleaved round-robin (order rotated per round); medians over rounds.
Every answer is checked (envelope, id, every prompt listed once, and each get's messages
equal to what ``Renderer`` produces in this process): a server that errs gets no numbers.
Then HEAD-to-notification latency (``serve_follow.py``) on the first size.

Usage: python benchmarks/serve_bench.py [--sizes 1000,10000] [--runs 5] [--write-docs]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_common import (
    DOCS,
    HERE,
    BenchError,
    Conn,
    env_info,
    make_package,
    median,
    now,
    pct,
    peak_rss_kb,
    promptops_cmd,
    result_of,
)
from serve_follow import follow_bench
from serve_report import render_docs, render_table

PROTOCOL = "2025-06-18"
ARGS = {"topic": "benchmarks", "tone": "formal"}


def handshake(conn: Conn) -> dict[str, Any]:
    res = conn.request("initialize", {"protocolVersion": PROTOCOL, "capabilities": {},
                                      "clientInfo": {"name": "serve_bench", "version": "1"}})
    if res.get("protocolVersion") != PROTOCOL or "prompts" not in res.get("capabilities", {}):
        raise BenchError(f"initialize: unexpected result {res!r:.300}")
    conn.notify("notifications/initialized")
    return res


def list_all(conn: Conn, expected: list[str]) -> tuple[float, int, float]:
    """Every page in turn: total ms, pages, and the ms of it spent parsing JSON here."""
    names: list[str] = []
    cursor, pages, parse, t0 = None, 0, 0.0, now()
    while True:
        rid, data = conn.encode("prompts/list", {"cursor": cursor} if cursor else {})
        conn.write(data)
        line = conn.readline(now() + conn.timeout)
        tp = now()
        msg = json.loads(line)
        parse += now() - tp
        res = result_of(msg, rid, "prompts/list")
        names += [p["name"] for p in res["prompts"]]
        pages += 1
        cursor = res.get("nextCursor")
        if not cursor:
            break
        if pages > len(expected) + 1:
            raise BenchError("prompts/list: the cursor never ends")
    ms = (now() - t0) * 1e3
    if sorted(names) != expected or len(names) != len(set(names)):
        raise BenchError(f"prompts/list: {len(names)} names, not the {len(expected)} expected")
    return ms, pages, parse * 1e3


def check_get(line: bytes, rid: int, name: str, expected: dict[str, Any]) -> None:
    res = result_of(json.loads(line), rid, f"prompts/get {name}")
    got = [(m["role"], m["content"]["type"], m["content"].get("text")) for m in res["messages"]]
    if got != expected[name]:
        raise BenchError(f"prompts/get {name}: messages differ from the Renderer's")


def gets(conn: Conn, names: list[str], passes: int, expected: dict[str, Any]
         ) -> tuple[list[float], list[float]]:
    out: list[list[float]] = []
    for _ in range(passes):
        lat = []
        for name in names:
            rid, data = conn.encode("prompts/get", {"name": name, "arguments": ARGS})
            t0 = now()
            conn.write(data)
            line = conn.readline(t0 + conn.timeout)
            lat.append((now() - t0) * 1e3)
            check_get(line, rid, name, expected)
        out.append(lat)
    return out[0], [x for p in out[1:] for x in p] or out[0]


def pipelined(conn: Conn, names: list[str], n: int, expected: dict[str, Any]) -> float:
    reqs = [conn.encode("prompts/get", {"name": names[i % len(names)], "arguments": ARGS})
            for i in range(n)]
    payload = b"".join(d for _, d in reqs)
    errors: list[OSError] = []

    def writer() -> None:
        try:
            conn.write(payload)
        except OSError as exc:
            errors.append(exc)

    th = threading.Thread(target=writer, daemon=True)
    t0 = now()
    th.start()
    lines = [conn.readline(t0 + conn.timeout + n * 0.05) for _ in range(n)]
    elapsed = now() - t0
    th.join(5)
    if errors:
        raise BenchError(f"pipelined write failed: {errors[0]}")
    pending = {rid: names[i % len(names)] for i, (rid, _) in enumerate(reqs)}
    for line in lines:  # answers may come in any order (the SDK runs requests as tasks)
        rid = json.loads(line).get("id")
        if rid not in pending:
            raise BenchError(f"pipelined prompts/get: unexpected or duplicate id {rid!r}")
        check_get(line, rid, pending.pop(rid), expected)
    return n / elapsed


def session(argv: list[str], cfg: argparse.Namespace, expected_names: list[str],
            expected: dict[str, Any]) -> dict[str, Any]:
    conn = Conn(argv, cfg.timeout)
    s: dict[str, Any] = {"ok": False}
    try:
        handshake(conn)
        s["cold_ms"] = (now() - conn.t_spawn) * 1e3
        s["list_first_ms"], s["pages"], _ = list_all(conn, expected_names)
        reps = [list_all(conn, expected_names) for _ in range(cfg.list_reps)]
        s["list_ms"] = median([r[0] for r in reps])
        s["list_parse_ms"] = median([r[2] for r in reps])
        todo = expected_names[: cfg.max_gets]
        first, steady = gets(conn, todo, cfg.get_passes, expected)
        s["get_first_p50"] = pct(first, 0.5)
        s["get_p50"], s["get_p99"] = pct(steady, 0.5), pct(steady, 0.99)
        s["pipe_rps"] = pipelined(conn, todo, cfg.n, expected)
        s["rss_mb"] = (peak_rss_kb(conn.proc.pid) or 0) / 1024
        s["ok"] = True
    except (BenchError, OSError, ValueError, KeyError, TypeError) as exc:
        s["error"] = f"{type(exc).__name__}: {exc} | stderr: {conn.stderr_tail(300)}"
    finally:
        conn.close()
    return s


def expected_for(bundle_file: Path, names: list[str]) -> dict[str, Any]:
    from promptops.pipeline.bundle import load_bundle
    from promptops.render.renderer import Renderer

    renderer = Renderer(load_bundle(bundle_file))
    out = {}
    for name in names:
        res = renderer.get(name, ARGS)
        out[name] = [(m["role"], m["content"]["type"], m["content"].get("text"))
                     for m in res["messages"]]
    return out


def bench_size(n: int, root: Path, cfg: argparse.Namespace,
               log: Callable[[str], None]) -> dict[str, Any]:
    pkg = make_package(n, root)
    dist = root / f"dist{n}"
    subprocess.run([*promptops_cmd(), "build", str(pkg), "--ref", "main", "-o", str(dist)],
                   check=True, capture_output=True)
    bundle_file = next(dist.glob("*.json"))
    names = sorted(p["name"] for p in json.loads(bundle_file.read_bytes())["prompts"])
    expected = expected_for(bundle_file, names[: cfg.max_gets])
    servers: list[dict[str, Any]] = [
        {"label": "promptops --bundle", "argv": [*promptops_cmd(), "serve", "--bundle",
                                                 str(bundle_file)]},
        {"label": "promptops repo (cached)", "argv": [*promptops_cmd(), "serve", str(pkg)]},
        {"label": "SDK low-level", "argv": [sys.executable, str(HERE / "sdk_server.py"),
                                            "--bundle", str(bundle_file)]},
    ]
    for srv in servers:  # untimed: fills the build cache, warms the page cache
        conn = Conn(srv["argv"], cfg.timeout)
        try:
            handshake(conn)
        finally:
            conn.close()
        srv["sessions"] = []
    for rnd in range(cfg.runs):
        k = rnd % len(servers)
        for srv in servers[k:] + servers[:k]:
            s = session(srv["argv"], cfg, names, expected)
            srv["sessions"].append(s)
            log(f"  {n} [{rnd + 1}/{cfg.runs}] {srv['label']}: " + (
                f"cold {s['cold_ms']:.0f} ms, list {s['list_ms']:.1f} ms, get p50 "
                f"{s['get_p50']:.3f} ms, {s['pipe_rps']:.0f} req/s, {s['rss_mb']:.1f} MB"
                if s["ok"] else f"FAIL {s['error']}"))
    keys = ("cold_ms", "list_ms", "list_parse_ms", "list_first_ms", "pages", "get_p50", "get_p99",
            "get_first_p50", "pipe_rps", "rss_mb")
    for srv in servers:
        ok = all(s["ok"] for s in srv["sessions"])
        srv["ok"] = ok
        srv["errors"] = sorted({s["error"] for s in srv["sessions"] if not s["ok"]})
        srv["summary"] = {k: median([s[k] for s in srv["sessions"]]) for k in keys} if ok else None
        del srv["argv"]
    return {"n": n, "pkg": pkg, "servers": servers}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,10000", help="prompt counts (default 1000,10000)")
    ap.add_argument("--runs", type=int, default=5, help="sessions per server (default 5)")
    ap.add_argument("--n", type=int, default=2000, help="pipelined requests (default 2000)")
    ap.add_argument("--max-gets", type=int, default=1000, help="prompts used by get and pipe")
    ap.add_argument("--get-passes", type=int, default=3, help="sequential get passes")
    ap.add_argument("--list-reps", type=int, default=3, help="timed list repeats")
    ap.add_argument("--head-runs", type=int, default=5, help="HEAD-to-notification runs")
    ap.add_argument("--settle", type=float, default=1.5,
                    help="HEAD cases that wait: the least seconds from the server's start to "
                         "the checkout, after 300 ms without CPU (default 1.5; the smoke "
                         "test's 0 keeps only the stillness)")
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--json-out", type=Path, help="also write all figures as JSON")
    ap.add_argument("--write-docs", action="store_true", help="rewrite the Serve section")
    ap.add_argument("--docs", type=Path, default=DOCS, help=argparse.SUPPRESS)
    cfg = ap.parse_args(argv)
    sizes = [int(x) for x in cfg.sizes.split(",") if x.strip()]
    info = env_info()

    def log(m: str) -> None:
        print(m, file=sys.stderr, flush=True)

    with tempfile.TemporaryDirectory(prefix="promptops-serve-bench-") as tmp:
        results = []
        for n in sizes:
            log(f"serving {n} prompts")
            results.append(bench_size(n, Path(tmp), cfg, log))
        log(f"HEAD-to-notification on {sizes[0]} prompts")
        head = follow_bench(results[0]["pkg"], cfg.head_runs, cfg.timeout, log, cfg.settle)
    for r in results:
        del r["pkg"]
    load_end = os.getloadavg()
    print(render_table(results, head))
    if cfg.json_out:
        cfg.json_out.write_text(json.dumps({"env": info, "sizes": results, "head": head},
                                           indent=1, default=str))
    if cfg.write_docs:
        cmd = "python benchmarks/serve_bench.py " + " ".join(argv or sys.argv[1:])
        render_docs(cfg.docs, cmd.strip(), cfg, info, load_end, results, head)
    failed = [s["label"] for r in results for s in r["servers"] if not s["ok"]]
    return 1 if failed or not head["ok"] else 0


if __name__ == "__main__":
    sys.exit(main())
