"""Growth to 100,000 prompts (issue 26, item 3): every cost of the toolchain per size.

For each size (``--sizes``, default 1000,10000; add 100000 when asked) and layout:

* ``one``: one package of N prompts (``benchmarks/genpkg.py``) in its own git repository;
* ``many``: N/1000 packages of 1,000 prompts (``p00/``, ``p01/``, ...) in one repository,
  served together by one ``promptops serve p00 p01 ...`` (prompt files renamed
  ``pNN_task_XXXXX`` so names are unique). Only when N >= 2000.

Measured per size and layout, every command a real subprocess:

* build: ``promptops build --no-lint --ref main`` with the build cache removed; wall time
  (summed over the packages of ``many``) and peak RSS of the build process (``ru_maxrss``
  from ``wait4``, the largest over the packages);
* serve cold start (spawn to the initialize reply) from the bundles (``--bundle``), from the
  repository with an empty build cache, and from the repository with the cache filled;
* RSS while serving (VmRSS after the gets) and peak (VmHWM), repository mode;
* ``prompts/list``: first page, and the whole paging (every cursor);
* ``prompts/get`` p50/p99 over ``--gets`` sequential gets of prompts spread over the whole
  set (one stdio session; the first pass, which compiles templates, is not counted);
* commit -> ``notifications/prompts/list_changed``: a commit on ``main`` (the checked-out
  branch serve follows) that rewrites one prompt's description, timed from the moment
  ``git commit`` returned; a prompts/get then checks the new text is served. Twice: the
  first commit of the session (serve's per-file memo is still empty, so it parses every
  file) and a second one (memo filled); then a commit removing a prompt (one with a
  template of its own, which leaves the bundle too) and one dropping a prompt's include;
* lint cold: ``promptops lint --format json`` of the package with the lint cache removed
  (each package for ``many``, summed);
* diff: a commit adding one line to ``partials/rules.j2`` (included by every prompt of its
  package through ``partials/preamble.j2``), then ``promptops diff HEAD~1 HEAD --format
  markdown`` with the lint cache cold (for ``many``, the edited package only: the others are
  untouched).

Then a table, the fitted exponent (least squares of log(value) on log(N) over the sizes of
the ``one`` layout: 1.0 is linear) of build time, build memory, lint and diff, and the
ratios issue 26 names: get p50 at the largest size / smallest (goal within 10%), list first
page largest / smallest (goal: independent of size), commit -> list_changed at the largest
size (goal < 1 s at 100k). The load average is printed at start and end: on a shared machine
the figures are loaded, and only ratios measured in one run mean much.

Usage: python benchmarks/growth.py [--sizes 1000,10000,100000] [--gets 300]
       [--layouts one,many] [--json-out FILE]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_common import (
    CLK_TCK,
    GIT_ENV,
    BenchError,
    Conn,
    cpu_ticks,
    env_info,
    fmt,
    genpkg,
    git,
    md_table,
    now,
    pct,
    peak_rss_kb,
    promptops_cmd,
)
from serve_bench import ARGS, check_get, expected_for, handshake, list_all
from serve_follow import wait_list_changed

PER_PACKAGE = 1000


def make_repo(n: int, layout: str, root: Path, per: int) -> tuple[Path, list[Path]]:
    """A git repository holding ``n`` prompts on ``main``; returns it and its packages."""
    repo = root / f"{layout}{n}"
    if layout == "one":
        pkgs = [genpkg.generate(n, repo)]
    else:
        pkgs = []
        for k in range(n // per):
            pkg = genpkg.generate(per, repo / f"p{k:02d}")
            (pkg / "promptops.yaml").write_text(f"name: bench-p{k:02d}\nversion: 1.0.0\n")
            for f in (pkg / "prompts").glob("*.prompt.yaml"):
                f.rename(f.with_name(f"p{k:02d}_{f.name}"))
            pkgs.append(pkg)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "bench")
    return repo, pkgs


def prompt_file(pkg: Path, i: int) -> Path:
    return next((pkg / "prompts").glob(f"*task_{i:05d}.prompt.yaml"))


def timed(argv: list[str], cwd: Path | None = None) -> tuple[float, int, float]:
    """Wall seconds, the child's own peak RSS in KiB and its CPU seconds.

    The peak is the child's ``VmHWM`` (/proc/<pid>/status), polled every 10 ms while it
    runs: ``ru_maxrss`` from ``wait4`` also keeps, across ``exec``, what this (forking)
    process had resident, which inflated the small builds' figures. A poll can miss only
    growth in the child's last 10 ms; once it exits its memory is gone from /proc. CPU is
    ``ru_utime + ru_stime`` of the child from ``wait4`` (its own, not this process's).
    """
    t0 = now()
    with tempfile.TemporaryFile() as err_file:
        proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=err_file,
                                env={**GIT_ENV, "NO_COLOR": "1"})
        peak = 0
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            peak = max(peak, peak_rss_kb(proc.pid) or 0)
            time.sleep(0.01)
        wall = now() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err_file.seek(0)
            raise BenchError(f"{' '.join(argv[-6:])}: exit {proc.returncode}: "
                             f"{err_file.read().decode(errors='replace')[-600:]}")
    return wall, peak, usage.ru_utime + usage.ru_stime


def clear_cache(repo: Path) -> None:
    shutil.rmtree(repo / ".git" / "promptops", ignore_errors=True)


def start(argv: list[str], timeout: float) -> tuple[Conn, float]:
    conn = Conn(argv, timeout)
    try:
        handshake(conn)
    except BaseException:
        conn.close()
        raise
    return conn, (now() - conn.t_spawn) * 1e3


def cold_ms(argv: list[str], timeout: float) -> float:
    conn, ms = start(argv, timeout)
    conn.close()
    return ms


def rss_kb(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


def spread(names: list[str], k: int) -> list[str]:
    """``k`` names evenly spread over the whole (sorted) set, not just its start."""
    step = max(1, len(names) // k)
    return names[::step][:k]


def serve_session(repo: Path, pkgs: list[Path], names: list[str], expected: dict[str, Any],
                  cfg: argparse.Namespace) -> dict[str, Any]:
    """The repository-mode session: cold start (cache filled), list, gets, RSS, follow."""
    argv = [*promptops_cmd(), "serve", *[str(p) for p in pkgs]]
    conn, ms = start(argv, cfg.timeout)
    out: dict[str, Any] = {"serve_repo_cached_ms": ms}
    try:
        t0 = now()
        first = conn.request("prompts/list", {})
        out["list_first_ms"] = (now() - t0) * 1e3
        out["page_size"] = len(first["prompts"])
        out["list_all_ms"], out["pages"], _ = list_all(conn, names)
        todo = spread(names, cfg.gets)
        lat: list[float] = []
        for rep in range(2):  # pass 0 compiles the templates: not counted
            for name in todo:
                rid, data = conn.encode("prompts/get", {"name": name, "arguments": ARGS})
                t1 = now()
                conn.write(data)
                line = conn.readline(t1 + conn.timeout)
                if rep:
                    lat.append((now() - t1) * 1e3)
                check_get(line, rid, name, expected)
        out["get_p50_ms"], out["get_p99_ms"] = pct(lat, 0.5), pct(lat, 0.99)
        out["serve_rss_mb"] = (rss_kb(conn.proc.pid) or 0) / 1024
        out["serve_peak_mb"] = (peak_rss_kb(conn.proc.pid) or 0) / 1024
        # commits touching one prompt, on the branch serve follows: the first of a session
        # rebuilds with an empty per-file memo, the second finds it filled (docs/following.md)
        for key, i in (("commit_to_list_changed_ms", 1), ("second_commit_ms", 2),
                       ("third_commit_ms", 3)):
            out[key], out[key.replace("_ms", "_cpu_ms")] = touch_and_wait(
                repo, prompt_file(pkgs[0], i), conn, cfg.timeout, quiet_s=cfg.settle)
        # a prompt removed with the template only it used, and an include dropped: what
        # they reached may leave the bundle (session 9: incremental, no longer a full build)
        for key, i, kind in (("remove_commit_ms", 0, "remove"), ("drop_commit_ms", 4, "drop")):
            out[key], out[key.replace("_ms", "_cpu_ms")] = touch_and_wait(
                repo, prompt_file(pkgs[0], i), conn, cfg.timeout, kind, quiet_s=cfg.settle)
        out["serve_rss_after_mb"] = (rss_kb(conn.proc.pid) or 0) / 1024
    finally:
        conn.close()
    return out


def touch_and_wait(repo: Path, target: Path, conn: Conn, timeout: float,
                   kind: str = "touch", *, quiet_s: float = 0.3) -> tuple[float, float | None]:
    """Commit a new description of ``target`` (``kind`` "touch"), its removal ("remove")
    or its text without its include of the preamble ("drop"); ms from the commit to
    ``list_changed`` (wall, and serve's CPU over that time), after which prompts/get must
    serve the new text (or no such prompt). The serve process is first left idle long
    enough for the last commit's deferred work (writing the build cache) to end: no CPU
    for ``quiet_s`` (``--settle``)."""
    settle(conn.proc.pid, quiet_s)
    marker = f"changed by growth.py {now()}"
    text = target.read_text()
    line0 = next(x for x in text.splitlines() if x.startswith("description:"))
    if kind == "remove":
        target.unlink()
    elif kind == "drop":
        target.write_text(text.replace(line0, f"description: {marker}", 1).replace(
            '{% include "partials/preamble.j2" %}', "", 1))
    else:
        target.write_text(text.replace(line0, f"description: {marker}", 1))
    conn.notifications.clear()
    git(repo, "commit", "-qam", f"{kind} {target.name}")
    t0, c0 = now(), cpu_ticks(conn.proc.pid)
    t1 = wait_list_changed(conn, t0 + timeout)
    c1 = cpu_ticks(conn.proc.pid)
    name = target.name.removesuffix(".prompt.yaml")
    if kind == "remove":
        _, data = conn.encode("prompts/get", {"name": name, "arguments": ARGS})
        conn.write(data)
        if "error" not in conn.read_response(now() + timeout):
            raise BenchError(f"after list_changed the removed {name} is served")
    elif conn.request("prompts/get", {"name": name, "arguments": ARGS}).get(
            "description") != marker:
        raise BenchError(f"after list_changed the old {name} is served")
    cpu = (c1 - c0) * 1e3 / CLK_TCK if c0 is not None and c1 is not None else None
    return (t1 - t0) * 1e3, cpu


def settle(pid: int, quiet_s: float = 0.3, limit_s: float = 120.0) -> None:
    """Wait until ``pid`` used no CPU for ``quiet_s`` and none of its threads is runnable
    (at most ``limit_s``): on a loaded machine a process waiting for a core uses no CPU
    either, and its last commit's deferred work (the build cache, the lint record) then
    landed in the next commit's figures."""
    end, last = now() + limit_s, cpu_ticks(pid)
    while now() < end:
        time.sleep(quiet_s)
        cur = cpu_ticks(pid)
        if cur == last and not runnable(pid):
            return
        last = cur


def runnable(pid: int) -> bool:
    """Whether a thread of ``pid`` is running or waiting for a core (state R)."""
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return False
    for task in tasks:
        try:
            stat = (task / "stat").read_text()
        except OSError:
            continue
        if stat[stat.rindex(")") + 2 :].startswith("R"):
            return True
    return False


def bench(n: int, layout: str, root: Path, cfg: argparse.Namespace,
          log: Callable[[str], None], r: dict[str, Any]) -> dict[str, Any]:
    """Fill ``r`` phase by phase (``cfg.save`` after each: a run stopped part way keeps
    what it measured)."""
    t0 = now()
    repo, pkgs = make_repo(n, layout, root, cfg.per_package)
    log(f"  generated and committed in {now() - t0:.1f} s")
    r.update({"n": n, "layout": layout, "packages": len(pkgs)})
    dist = root / f"dist-{layout}{n}"
    build_s, build_kb, build_cpu = 0.0, 0, 0.0
    for pkg in pkgs:
        clear_cache(repo)
        w, kb, cpu = timed([*promptops_cmd(), "build", "--no-lint", str(pkg), "--ref", "main",
                            "-o", str(dist / pkg.name)])
        build_s, build_kb, build_cpu = build_s + w, max(build_kb, kb), build_cpu + cpu
    r["build_s"], r["build_peak_mb"], r["build_cpu_s"] = build_s, build_kb / 1024, build_cpu
    log(f"  build {build_s:.2f} s ({build_cpu:.2f} s CPU), {build_kb / 1024:.0f} MB")
    cfg.save()
    bundles = sorted(dist.glob("*/*.json"))
    names: list[str] = []
    expected: dict[str, Any] = {}
    for b in bundles:
        mine = sorted(p["name"] for p in json.loads(b.read_bytes())["prompts"])
        names += mine
        expected.update(expected_for(b, spread(mine, max(1, cfg.gets // len(bundles)) + 1)))
    names.sort()
    todo = spread(names, cfg.gets)
    missing = [x for x in todo if x not in expected]
    if missing:  # the spread over the whole set picks names the per-bundle spread did not
        for b in bundles:
            mine = {p["name"] for p in json.loads(b.read_bytes())["prompts"]}
            expected.update(expected_for(b, [x for x in missing if x in mine]))
    bundle_argv = [*promptops_cmd(), "serve", *[a for b in bundles for a in ("--bundle", str(b))]]
    r["serve_bundle_ms"] = cold_ms(bundle_argv, cfg.timeout)
    clear_cache(repo)
    repo_argv = [*promptops_cmd(), "serve", *[str(p) for p in pkgs]]
    r["serve_repo_uncached_ms"] = cold_ms(repo_argv, cfg.timeout)
    cfg.save()
    r.update(serve_session(repo, pkgs, names, expected, cfg))
    cfg.save()
    log(f"  serve: bundle {r['serve_bundle_ms']:.0f} ms, repo {r['serve_repo_cached_ms']:.0f} ms,"
        f" get p50 {r['get_p50_ms']:.3f} ms, commit->list_changed "
        f"{r['commit_to_list_changed_ms']:.0f} ms")
    if f"lint@{n}" not in cfg.skip:
        lint_s, lint_cpu, lint_kb = 0.0, 0.0, 0
        for pkg in pkgs:
            clear_cache(repo)
            w, kb, cpu = timed([*promptops_cmd(), "lint", str(pkg), "--format", "json"])
            lint_s, lint_cpu, lint_kb = lint_s + w, lint_cpu + cpu, max(lint_kb, kb)
        r["lint_s"], r["lint_cpu_s"], r["lint_peak_mb"] = lint_s, lint_cpu, lint_kb / 1024
        log(f"  lint {lint_s:.2f} s ({lint_cpu:.2f} s CPU)")
        cfg.save()
    if f"diff@{n}" not in cfg.skip:
        rules = pkgs[0] / "partials" / "rules.j2"
        rules.write_text(rules.read_text() + "Cite your sources.\n")
        git(repo, "commit", "-qam", "edit one shared partial")
        clear_cache(repo)
        r["diff_s"], _, r["diff_cpu_s"] = timed(
            [*promptops_cmd(), "diff", "HEAD~1", "HEAD", "--format", "markdown",
             "-o", str(root / f"review-{layout}{n}.md")], cwd=pkgs[0])
        log(f"  diff {r['diff_s']:.2f} s ({r['diff_cpu_s']:.2f} s CPU)")
        cfg.save()
    shutil.rmtree(repo)
    shutil.rmtree(dist)
    return r


def exponent(points: list[tuple[int, float | None]]) -> float | None:
    """Least-squares slope of log(value) on log(size): 1.0 is linear growth."""
    pts = [(math.log(n), math.log(v)) for n, v in points if v and v > 0]
    if len(pts) < 2:
        return None
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    den = sum((x - mx) ** 2 for x, _ in pts)
    return sum((x - mx) * (y - my) for x, y in pts) / den if den else None


ROWS = [("build --no-lint (s)", "build_s", 2), ("build CPU (s)", "build_cpu_s", 2),
        ("build peak RSS, VmHWM (MB)", "build_peak_mb", 0),
        ("serve cold, bundle (ms)", "serve_bundle_ms", 0),
        ("serve cold, repo uncached (ms)", "serve_repo_uncached_ms", 0),
        ("serve cold, repo cached (ms)", "serve_repo_cached_ms", 0),
        ("RSS serving, repo (MB)", "serve_rss_mb", 1),
        ("peak RSS serving (MB)", "serve_peak_mb", 1),
        ("RSS serving after the commits (MB)", "serve_rss_after_mb", 1),
        ("prompts/list first page (ms)", "list_first_ms", 2),
        ("prompts/list all pages (ms)", "list_all_ms", 1), ("pages", "pages", 0),
        ("prompts/get p50 (ms)", "get_p50_ms", 3), ("prompts/get p99 (ms)", "get_p99_ms", 3),
        ("commit -> list_changed, 1st of session (ms)", "commit_to_list_changed_ms", 0),
        ("  serve CPU over it (ms)", "commit_to_list_changed_cpu_ms", 0),
        ("commit -> list_changed, 2nd (ms)", "second_commit_ms", 0),
        ("  serve CPU over it (ms)", "second_commit_cpu_ms", 0),
        ("commit -> list_changed, 3rd (ms)", "third_commit_ms", 0),
        ("  serve CPU over it (ms)", "third_commit_cpu_ms", 0),
        ("commit removing a prompt -> list_changed (ms)", "remove_commit_ms", 0),
        ("  serve CPU over it (ms)", "remove_commit_cpu_ms", 0),
        ("commit dropping an include -> list_changed (ms)", "drop_commit_ms", 0),
        ("  serve CPU over it (ms)", "drop_commit_cpu_ms", 0),
        ("lint cold (s)", "lint_s", 2), ("lint CPU (s)", "lint_cpu_s", 2),
        ("lint peak RSS, VmHWM (MB)", "lint_peak_mb", 0),
        ("diff, one partial, cold (s)", "diff_s", 2), ("diff CPU (s)", "diff_cpu_s", 2)]


def report(results: list[dict[str, Any]]) -> str:
    cols = [f"{r['n']:,} {r['layout']}" + (f" ({r['packages']} pkgs)" if r["packages"] > 1 else "")
            for r in results]
    table = [["measurement", *cols]]
    table += [[label, *[fmt(r.get(key), nd) for r in results]] for label, key, nd in ROWS]
    lines = [md_table(table), ""]
    one = [r for r in results if r["layout"] == "one"]
    if len(one) >= 2:
        lines.append("| fitted exponent (log-log, `one` layout) | value |")
        lines.append("| --- | --- |")
        for label, key in (("build time", "build_s"), ("build CPU", "build_cpu_s"),
                           ("build memory", "build_peak_mb"),
                           ("lint cold", "lint_s"), ("lint CPU", "lint_cpu_s"),
                           ("lint memory", "lint_peak_mb"),
                           ("diff, one partial", "diff_s"), ("diff CPU", "diff_cpu_s"),
                           ("serve RSS", "serve_rss_mb"),
                           ("commit -> list_changed, 1st", "commit_to_list_changed_ms"),
                           ("  serve CPU over it", "commit_to_list_changed_cpu_ms")):
            e = exponent([(r["n"], r.get(key)) for r in one])
            lines.append(f"| {label} | {'-' if e is None else f'{e:.2f}'} |")
        lo, hi = one[0], one[-1]
        if any(k not in x for x in (lo, hi) for k in ("get_p50_ms", "list_first_ms",
                                                       "second_commit_ms")):
            return "\n".join(lines)  # a size stopped before its serve session
        lines += ["", "| goal (issue 26) | measured |", "| --- | --- |",
                  f"| get p50 {hi['n']:,} / {lo['n']:,} within 10% | "
                  f"{hi['get_p50_ms'] / lo['get_p50_ms']:.2f}x |",
                  f"| list first page {hi['n']:,} / {lo['n']:,} independent of size | "
                  f"{hi['list_first_ms'] / lo['list_first_ms']:.2f}x |",
                  f"| commit -> list_changed at {hi['n']:,} < 1 s | "
                  f"{hi['commit_to_list_changed_ms']:.0f} ms (1st), "
                  f"{hi['second_commit_ms']:.0f} ms (2nd) |"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,10000", help="prompt counts (default 1000,10000)")
    ap.add_argument("--layouts", default="one,many", help="one, many or both (default)")
    ap.add_argument("--per-package", type=int, default=PER_PACKAGE,
                    help="prompts per package in the many layout (default 1000)")
    ap.add_argument("--gets", type=int, default=300, help="timed prompts/get (default 300)")
    ap.add_argument("--settle", type=float, default=0.3,
                    help="before each commit, serve must have used no CPU for this many "
                         "seconds (default 0.3; its last commit's deferred work done)")
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--json-out", type=Path, help="also write all figures as JSON (after "
                    "each phase: a run stopped part way keeps what it measured)")
    ap.add_argument("--skip", default="", help="phases not measured, as PHASE@SIZE, comma "
                    "separated (lint, diff): e.g. diff@100000 on a loaded machine")
    ap.add_argument("--keep-going", action="store_true",
                    help="a size that fails is reported as far as it got, not the end")
    cfg = ap.parse_args(argv)
    cfg.skip = {x.strip() for x in cfg.skip.split(",") if x.strip()}
    sizes = [int(x) for x in cfg.sizes.split(",") if x.strip()]
    layouts = [x.strip() for x in cfg.layouts.split(",") if x.strip()]
    info = env_info()
    print("load average at start: " + ", ".join(f"{x:.2f}" for x in info["loadavg"])
          + f" (cpus: {info['cpus']})", flush=True)

    def log(m: str) -> None:
        print(m, file=sys.stderr, flush=True)

    results: list[dict[str, Any]] = []

    def save() -> None:
        if cfg.json_out:
            cfg.json_out.write_text(json.dumps({"env": info, "results": results}, indent=1))

    cfg.save = save
    with tempfile.TemporaryDirectory(prefix="promptops-growth-") as tmp:
        for n in sizes:
            for layout in layouts:
                if layout == "many" and n < 2 * cfg.per_package:
                    continue
                log(f"{n} prompts, layout {layout}")
                results.append({"n": n, "layout": layout, "packages": 0})
                try:
                    bench(n, layout, Path(tmp), cfg, log, results[-1])
                except BenchError as exc:
                    if not cfg.keep_going:
                        raise
                    results[-1]["error"] = str(exc)[:300]
                    log(f"  failed, going on: {exc}")
                    save()
    print(report(results))
    print("load average at end: " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    if cfg.json_out:
        cfg.json_out.write_text(json.dumps({"env": info, "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
