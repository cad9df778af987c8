"""HEAD-to-notification latency of ``promptops serve REPO`` (part of serve_bench).

Each run spawns ``promptops serve PKG`` with ``main`` checked out (its build is in the
cache, ``.git/promptops``, which is never cleared), does initialize + initialized, then
runs ``git checkout -q BRANCH`` where BRANCH differs from main in one prompt, and times
from the moment checkout returned (HEAD moved) until
``notifications/prompts/list_changed`` arrives. A prompts/get of the changed prompt then
checks the new content is served. Three cases:

* ``cached``: BRANCH was served once before, so its bundle is in the cache;
* ``never built``: BRANCH is a new commit made for this run, so its tree was never
  built: the rebuild is part of the latency;
* ``never built, at once``: as above but checked out right after initialize.

In the first two cases the checkout waits until the server's CPU time has been still
for 300 ms (at least 1.5 s after start), as when a developer switches branch some time
after the client started the server. (Since issue 17 the server has no idle warm-up:
the first never-built checkout of a session imports the build and parses every file in
both never-built cases.)
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_common import (
    BenchError,
    Conn,
    branch_with_change,
    cpu_ticks,
    git,
    median,
    now,
    promptops_cmd,
)

PROTOCOL = "2025-06-18"
CHANGED = 1  # the prompt index each branch changes


def settle(conn: Conn, min_s: float = 1.5, max_s: float = 20.0) -> None:
    """Wait until the server is idle: no CPU tick for 300 ms after ``min_s``."""
    start = now()
    last, still = cpu_ticks(conn.proc.pid), 0
    while now() - start < max_s:
        time.sleep(0.1)
        ticks = cpu_ticks(conn.proc.pid)
        still = still + 1 if ticks is not None and last is not None and ticks - last <= 1 else 0
        last = ticks
        if still >= 3 and now() - start >= min_s:
            return


def one_run(pkg: Path, branch: str, marker: str, *, wait: bool, timeout: float,
            settle_s: float = 1.5) -> dict[str, Any]:
    git(pkg, "checkout", "-q", "main")
    conn = Conn([*promptops_cmd(), "serve", str(pkg)], timeout)
    try:
        conn.request("initialize", {"protocolVersion": PROTOCOL, "capabilities": {},
                                    "clientInfo": {"name": "serve_bench", "version": "1"}})
        conn.notify("notifications/initialized")
        if wait:
            settle(conn, settle_s)
        conn.notifications.clear()
        t0 = now()
        git(pkg, "checkout", "-q", branch)
        t1 = now()
        t2 = wait_list_changed(conn, t1 + timeout)
        res = conn.request("prompts/get", {"name": f"task_{CHANGED:05d}",
                                           "arguments": {"topic": "x"}})
        if res.get("description") != marker:
            raise BenchError(f"after list_changed the old prompt is served: {res!r:.200}")
        return {"ok": True, "ms": (t2 - t1) * 1e3, "checkout_ms": (t1 - t0) * 1e3}
    except (BenchError, OSError, ValueError) as exc:
        return {"ok": False, "error": f"{exc} | stderr: {conn.stderr_tail(400)}"}
    finally:
        conn.close()
        git(pkg, "checkout", "-q", "main")


def wait_list_changed(conn: Conn, deadline: float) -> float:
    """When ``notifications/prompts/list_changed`` arrived (other lines are skipped)."""
    while True:
        msg = json.loads(conn.readline(deadline))
        if isinstance(msg, dict) and msg.get("method") == "notifications/prompts/list_changed":
            return now()


def follow_bench(pkg: Path, runs: int, timeout: float, log: Callable[[str], None],
                 settle_s: float = 1.5) -> dict[str, Any]:
    """The three cases, ``runs`` times each. ``settle_s``: the least time from a server's
    start to a waiting case's checkout (it must also have been still for 300 ms);
    serve_bench's ``--settle``."""
    marker = "served from the other branch"
    branch_with_change(pkg, "other", CHANGED, marker)
    warm = Conn([*promptops_cmd(), "serve", "--ref", "other", str(pkg)], timeout)
    try:  # builds "other" once, so the cached case finds it in .git/promptops
        warm.request("initialize", {"protocolVersion": PROTOCOL, "capabilities": {},
                                    "clientInfo": {"name": "serve_bench", "version": "1"}})
    finally:
        warm.close()
    cases: dict[str, list[dict[str, Any]]] = {"cached": [], "never built": [],
                                              "never built, at once": []}
    for r in range(runs):
        for label, items in cases.items():
            if label == "cached":
                branch, mark = "other", marker
            else:
                mark = f"fresh {label} {r} {time.time_ns()}"
                branch = f"fresh-{len(items)}-{'now' if 'once' in label else 'warm'}"
                branch_with_change(pkg, branch, CHANGED, mark)
            res = one_run(pkg, branch, mark, wait="once" not in label, timeout=timeout,
                          settle_s=settle_s)
            items.append(res)
            log(f"  HEAD [{r + 1}/{runs}] {label}: " + (
                f"{res['ms']:.0f} ms (checkout {res['checkout_ms']:.0f} ms)" if res["ok"]
                else f"FAIL {res['error']}"))
    out: dict[str, Any] = {"ok": True, "runs": runs, "cases": {}}
    for label, items in cases.items():
        ok = all(i["ok"] for i in items)
        out["ok"] = out["ok"] and ok
        out["cases"][label] = {
            "ok": ok, "median_ms": median([i["ms"] for i in items]) if ok else None,
            "max_ms": max(i["ms"] for i in items) if ok else None,
            "checkout_ms": median([i["checkout_ms"] for i in items]) if ok else None,
            "errors": sorted({i["error"] for i in items if not i["ok"]}),
        }
    return out
