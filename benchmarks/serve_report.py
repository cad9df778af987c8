"""Tables of serve_bench results, for the terminal and for the Serve section of
docs/benchmarks.md (targets of issue 4 with a met/not-met column)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from bench_common import env_lines, fmt, md_table, write_section

# (size, metric key, label, limit, higher is better)
TARGETS = [
    (1000, "cold_ms", "cold start, spawn to initialize reply (median)", 250, False),
    (1000, "get_p50", "prompts/get p50 (sequential)", 0.5, False),
    (1000, "pipe_rps", "pipelined prompts/get throughput", 5000, True),
    (1000, "rss_mb", "peak RSS (VmHWM)", 60, False),
    (10000, "cold_ms", "cold start, spawn to initialize reply (median)", 700, False),
    (10000, "list_ms", "whole paged prompts/list", 100, False),
]
UNITS = {"cold_ms": "ms", "get_p50": "ms", "pipe_rps": "req/s", "rss_mb": "MB", "list_ms": "ms"}
PROMPTOPS = ("promptops --bundle", "promptops repo (cached)")


def _value(srv: dict[str, Any], key: str) -> str:
    summ = srv["summary"]
    if summ is None:
        return "FAILED"
    nd = 3 if key.startswith("get") else (2 if key.startswith("list") else 1)
    return fmt(summ[key], nd)


def size_table(r: dict[str, Any]) -> str:
    cols = [("cold ms", "cold_ms"), ("list ms (all pages)", "list_ms"),
            ("of which client JSON parse", "list_parse_ms"), ("first list ms", "list_first_ms"),
            ("get p50 ms", "get_p50"),
            ("get p99 ms", "get_p99"), ("first-pass get p50 ms", "get_first_p50"),
            ("pipelined req/s", "pipe_rps"), ("peak RSS MB", "rss_mb")]
    rows = [["server", *[c for c, _ in cols]]]
    for srv in r["servers"]:
        rows.append([srv["label"], *[_value(srv, k) for _, k in cols]])
    return md_table(rows)


def targets_table(results: list[dict[str, Any]], head: dict[str, Any]) -> str:
    by_size = {r["n"]: {s["label"]: s for s in r["servers"]} for r in results}
    rows = [["target", "limit", *PROMPTOPS, "SDK low-level", "met"]]
    for n, key, label, limit, higher in TARGETS:
        servers = by_size.get(n)
        if servers is None:
            continue
        missed = [p for p in PROMPTOPS if servers[p]["summary"] is None or not (
            servers[p]["summary"][key] > limit if higher else servers[p]["summary"][key] < limit)]
        verdict = ("met" if not missed else "NOT MET" if len(missed) == len(PROMPTOPS)
                   else "met, except " + ", ".join(missed))
        rows.append([f"{n:,} prompts: {label}", f"{'>' if higher else '<'} {limit:,} "
                     f"{UNITS[key]}", *[_value(servers[p], key) for p in PROMPTOPS],
                     _value(servers["SDK low-level"], key), verdict])
    for case in ("cached", "never built"):
        c = head["cases"][case]
        ok = c["ok"] and c["median_ms"] < 500
        rows.append([f"HEAD-to-notification, target commit {case} (median)", "< 500 ms", "-",
                     fmt(c["median_ms"]) if c["ok"] else "FAILED", "n/a",
                     "met" if ok else "NOT MET"])
    return md_table(rows)


def head_table(head: dict[str, Any]) -> str:
    rows = [["case", "median ms", "max ms", "git checkout ms", "runs"]]
    for label, c in head["cases"].items():
        if c["ok"]:
            rows.append([label, fmt(c["median_ms"]), fmt(c["max_ms"]), fmt(c["checkout_ms"]),
                         str(head["runs"])])
        else:
            rows.append([label, "FAILED: " + "; ".join(c["errors"])[:200], "-", "-", "-"])
    return md_table(rows)


def render_table(results: list[dict[str, Any]], head: dict[str, Any]) -> str:
    parts = []
    for r in results:
        parts += [f"### {r['n']:,} prompts", "", size_table(r), ""]
        for srv in r["servers"]:
            for err in srv["errors"]:
                parts += [f"{srv['label']} FAILED: {err}", ""]
    parts += ["### HEAD-to-notification (promptops repo)", "", head_table(head), "",
              "### Targets", "", targets_table(results, head)]
    return "\n".join(parts)


INTRO = """\
Command: `{cmd}` ({runs} sessions per server and size, interleaved round-robin with the
order rotated each round; medians over sessions; a fresh process per session).
The harness (`benchmarks/serve_bench.py`, standard library only) speaks newline-delimited
JSON-RPC over real pipes, protocol 2025-06-18. Servers:

- **promptops --bundle**: `promptops serve --bundle FILE` (the console script, as an MCP
  client spawns it).
- **promptops repo (cached)**: `promptops serve REPO` on a commit whose bundle is already in
  the build cache `.git/promptops` (one untimed session fills it first; it is never cleared).
  This server also follows HEAD; since issue 17 it loads nothing of the build until HEAD
  moves to a commit that is not cached (there is no idle warm-up any more).
- **SDK low-level**: `benchmarks/sdk_server.py`, the official MCP Python SDK
  (`mcp==2.3.0`) low-level `Server` serving the same bundle and rendering with promptops'
  own `Renderer` (same Jinja sandbox, validation and template cache): only the protocol
  layer differs.

Per session: cold start = spawn to the `initialize` reply; the whole `prompts/list` through
every page (100 prompts per page on both) is listed once ("first") and then {list_reps}
more times (median; this includes the harness parsing each page's JSON, shown apart
because it costs every server the same); sequential `prompts/get` over the first
{max_gets} prompts, {passes} passes, the first (which compiles templates) reported apart,
p50/p99 over the later ones;
{n} `prompts/get` written without waiting (pipelined) for requests/s; then peak RSS
(VmHWM from `/proc`). Every response is validated (envelope and id, every prompt listed
exactly once, every get's messages equal to what `Renderer` renders in the harness); a
server with any failure gets no numbers. Latencies are measured in the client and include
the pipe round trip and the harness; they are comparable across servers, not absolute.
"""

HEAD_NOTE = """\
HEAD-to-notification: `promptops serve REPO` on a {n:,}-prompt package with `main`
checked out; after initialize + initialized, `git checkout -q BRANCH` (BRANCH differs in
one prompt), timed from checkout's return until `notifications/prompts/list_changed`
arrives; a `prompts/get` then checks the changed prompt is served. *cached*: BRANCH was
served before, its bundle is in `.git/promptops` (not cleared). *never built*: a new commit
per run, so its tree was never built and the (incremental) rebuild is included. In both,
the checkout waits until the server has been idle for 300 ms, as when a developer switches
branch a while after the client started it. *never built, at once*: the checkout follows
the initialize reply immediately. Without the idle warm-up (dropped in issue 17 for memory)
the first never-built checkout of a session imports the build stack and parses every file
in both cases; later ones re-parse only what changed (docs/following.md). The
follower polls every 50 ms and waits for 120 ms of quiet, so ~170 ms is the floor.
"""


ANALYSIS = """\
### Where the time goes (profiled on this machine, CPU time, 2026-11-30)

- **Cold start** (`--bundle`, or a cached commit, which loads the same verified JSON):
  interpreter start and imports (standard library, Jinja2 is imported lazily on the first
  get) are ~60 ms of CPU; then `load_bundle`: `json.loads` (~10 ms per 1,000 prompts) and
  the digest check. The digest check used to re-serialise the whole bundle (as long as the
  parse itself: ~80 ms at 10,000 prompts); it now hashes the file's bytes directly when the
  file has the canonical layout `promptops build` writes (`bundle.py`,
  `_digest_of_serialised`), falling back to the full recomputation otherwise.
- **prompts/get**: ~57 µs of server CPU per request at steady state, most of it in Jinja2's
  runtime (a new `Context` per template and per `{% include %}`), then validation and JSON.
  The first get of each prompt compiles its templates (~1 ms).
- **Whole paged list, 10,000 prompts**: 100 round trips of ~25 KB. Server side ~30 ms to
  serialise; the descriptors are now built once per snapshot and revision
  (`Snapshot.descriptor` in `serve/catalog.py`), which removed another ~30 ms from every
  listing after the first. The harness's own JSON parsing (~25 ms) is part of the figure.
- **Peak RSS of `promptops serve REPO`**: the `--bundle` figure until HEAD first moves to a
  commit that is not cached; that rebuild imports the build stack (pydantic, GitPython,
  Jinja2's compiler: ~17 MB) and fills the per-file memo, which keeps each file's validated
  model and text but not its parsed YAML (~8 MB at 1,000 prompts, ~90 MB at 10,000).
- **HEAD-to-notification, never built** (1,000 prompts, memo filled): ~170 ms is the
  follower's floor (50 ms polling + 120 ms quiet period); the incremental rebuild is about
  80 ms: `git ls-tree` of the commit, one `git cat-file --batch` for the files not seen
  before (prompt files are memoised by blob id, so an unchanged one is not even read), the
  bundle compile and its digest. A shorter quiet period would lower the floor.
"""


def render_docs(path: Path, cmd: str, cfg: argparse.Namespace, info: dict[str, Any],
                load_end: tuple[float, ...], results: list[dict[str, Any]],
                head: dict[str, Any]) -> None:
    body = [INTRO.format(cmd=cmd, runs=cfg.runs, list_reps=cfg.list_reps,
                         max_gets=cfg.max_gets, passes=cfg.get_passes, n=cfg.n),
            *env_lines(info, load_end), "", "### Targets (issue 4)", "",
            targets_table(results, head), ""]
    for r in results:
        body += [f"### {r['n']:,} prompts", "", size_table(r), ""]
    body += ["### HEAD-to-notification", "", HEAD_NOTE.format(n=results[0]["n"]),
             head_table(head), "", ANALYSIS]
    write_section("Serve", "\n".join(body), path)
