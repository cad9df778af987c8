"""Release channels: what a promotion costs, and how soon `serve --channel` announces it.

A generated package of N prompts is released twice (1.0.0, then 1.0.1 with one prompt's
description changed). Measured, each over RUNS rounds:

* ``promote`` wall time: ``promptops promote 1.0.1 --to production`` as a process: the
  policy, the rebuild of the release to its recorded digest, lint and tests, the
  compare-and-swap;
* ``rollback`` wall time: ``promptops rollback production`` (no rebuild, no gates);
* move -> ``list_changed``: from the moment the channel's loose ref file changed (polled
  every 0.5 ms while the command runs) until ``notifications/prompts/list_changed`` reaches
  a client of
  ``promptops serve --channel production`` over stdio; a ``prompts/get`` then checks the
  description the channel now names is served.

Usage: python benchmarks/channels_bench.py [--prompts N] [--runs R]
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

from bench_common import (
    GIT_ENV,
    BenchError,
    Conn,
    env_info,
    env_lines,
    fmt,
    git,
    make_package,
    md_table,
    median,
    now,
    pct,
    promptops_cmd,
)


def _cli(pkg: Path, *args: str, ref: Path | None = None) -> tuple[float, float]:
    """Run promptops: its wall time in ms, and (with ``ref``) when that file changed, as
    ``now()``, polled every 0.5 ms (the compare-and-swap renames the loose ref)."""
    t0 = now()
    before = _stat(ref) if ref else None
    moved = 0.0
    proc = subprocess.Popen([*promptops_cmd(), *args], cwd=pkg, env=GIT_ENV,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    while ref is not None and not moved and proc.poll() is None:
        if _stat(ref) != before:
            moved = now()
        time.sleep(0.0005)
    _, err = proc.communicate()
    if proc.returncode != 0:
        raise BenchError(f"promptops {' '.join(args)}: {err.strip()[:400]}")
    if ref is not None and not moved:
        raise BenchError(f"promptops {' '.join(args)} exited before {ref} was seen moving")
    return (now() - t0) * 1000, moved


def _stat(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_ino


def _wait_changed(conn: Conn, t0: float, timeout: float) -> float:
    """ms from ``t0`` until the next list_changed is read."""
    deadline = now() + timeout
    while True:
        for note in conn.notifications:
            if note.get("method") == "notifications/prompts/list_changed":
                conn.notifications.clear()
                return (now() - t0) * 1000
        msg = json.loads(conn.readline(deadline))
        if "method" in msg and "id" not in msg:
            conn.notifications.append(msg)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--prompts", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=10)
    opts = ap.parse_args()
    info = env_info()
    with tempfile.TemporaryDirectory() as tmp:
        pkg = make_package(opts.prompts, Path(tmp))
        _cli(pkg, "release")
        manifest = pkg / "promptops.yaml"
        manifest.write_text(manifest.read_text().replace("version: 1.0.0", "version: 1.0.1"))
        prompt = pkg / "prompts" / "task_00000.prompt.yaml"
        text = prompt.read_text()
        line = next(x for x in text.splitlines() if x.startswith("description:"))
        prompt.write_text(text.replace(line, "description: promoted", 1))
        git(pkg, "commit", "-qam", "1.0.1")
        _cli(pkg, "release")
        _cli(pkg, "promote", "1.0.0", "--to", "production")
        name = manifest.read_text().split("name: ", 1)[1].split()[0]
        ref = pkg / ".git" / "refs" / "promptops" / "channels" / name / "production"
        conn = Conn([*promptops_cmd(), "serve", "--channel", "production", str(pkg)], 60)
        promote_ms: list[float] = []
        rollback_ms: list[float] = []
        notify_ms: list[float] = []
        try:
            conn.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                        "clientInfo": {"name": "bench", "version": "0"}})
            conn.notify("notifications/initialized")
            for _ in range(opts.runs):
                for args, want, into in (
                        (("promote", "1.0.1", "--to", "production"), "promoted", promote_ms),
                        (("rollback", "production"), None, rollback_ms)):
                    took, moved = _cli(pkg, *args, ref=ref)
                    into.append(took)
                    notify_ms.append(_wait_changed(conn, moved, 30))
                    listed = conn.request("prompts/list")["prompts"]
                    got = next(p for p in listed if p["name"] == "task_00000")
                    if (got.get("description") == "promoted") != (want == "promoted"):
                        raise BenchError(f"after {args[0]} the served description is "
                                         f"{got.get('description')!r}")
        finally:
            conn.close()
    rows = [["measurement", "prompts", "median", "p95", "runs"]]
    for name, xs in (("promote (process)", promote_ms), ("rollback (process)", rollback_ms),
                     ("move -> list_changed", notify_ms)):
        rows.append([name, str(opts.prompts), f"{fmt(median(xs))} ms", f"{fmt(pct(xs, 0.95))} ms",
                     str(len(xs))])
    print(md_table(rows))
    print("\n".join(env_lines(info, os.getloadavg())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
