"""``floor_bench.py`` in instructions: the floor, ``serve REPO`` and ``serve --bundle``.

``floor_bench.py`` reads CPU time and wall clock, which on a shared 2-core machine swing by
more than the changes they are meant to judge. Instruction counts (valgrind's callgrind) do
not depend on the machine's load. This script runs the same three servers as
``floor_bench.py`` (``floor/srv_floor.py``, ``promptops serve PKG``, ``promptops serve
--bundle BUNDLE``) on the same generated prompt set and package, as real subprocesses with
their stdin a file of requests and their stdout ``/dev/null``, and prints:

* **per pipelined get**: the difference between a run of the handshake, one get of each
  of the first ``--max-gets`` prompts (every template compiled) and ``--gets``/2 gets more,
  and the same run with ``--gets`` more gets cycling over those prompts, divided by
  ``--gets``. Instructions do
  not see the CPU cache, so cycling over 20 prompts or 1,000 differs little but in run
  time. The whole request path is in it: reading stdin, parsing, rendering, encoding, the
  write calls. Counted per thread (``--separate-threads=yes``): the answering thread is
  the one that writes the replies (the floor's main thread, serve's stdio worker), ``all``
  adds every other thread. The other threads of ``serve`` (the render watchdog, repo
  mode's follower) wake on wall-clock timers, so their share grows with valgrind's
  slowdown (~50x): ``all`` overstates them by that factor, the answering thread leaves
  them out. The floor's figure is reproducible (one thread: 0.04% between runs); serve's
  was not on a loaded machine (70,000-192,000 for one checkout, once negative): its timer
  threads (the watchdog every 100 ms of wall time, repo mode's follower and dirty-tree
  note) and the GIL hand-offs they force fall differently in each run under valgrind.
  Until that is solved, compare serve's request core with ``get_instructions.py`` (main
  thread) and read this figure only from an idle machine, several runs.
* **cold start to the first reply**: every instruction of every thread from ``exec`` until
  the initialize reply is written (``--dump-before`` the first stdout write: ``os.write``
  for serve, the buffered file's write for the floor), so the exit is not in it, as
  ``floor_bench.py``'s ``cold_ms`` stops at the reply.

Every server runs with the bytecode cache on (``PYTHONPYCACHEPREFIX`` in the work
directory, filled by an untimed run first, as ``floor_bench.py`` does) and
``PYTHONHASHSEED=0``. Two runs of one checkout agreed to 0.03% per get and 1% on cold
start (the cold start's count moves with the paths and environment it reads).

Usage: python benchmarks/floor_instructions.py [--sizes 1000,10000] [--gets 200]
[--max-gets 20] [--what gets,cold] [--servers floor,repo,bundle] [--keep DIR]
[--checkout DIR] [--json-out FILE]
(needs valgrind; with ``--keep`` the packages are reused by a later run.)
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
FLOOR = HERE / "floor"
sys.path.insert(0, str(HERE))

from floor_bench import make_package  # noqa: E402

# The function whose first call writes the initialize reply (cold start ends before it).
FIRST_WRITE = {"floor": "_io_FileIO_write", "repo": "os_write", "bundle": "os_write"}


def line(obj: object) -> bytes:
    return (json.dumps(obj, separators=(",", ":")) + "\n").encode()


def handshake() -> bytes:
    return line({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "floor_instructions", "version": "1"}}})


def gets(names: list[str], n: int, first_id: int) -> bytes:
    """``n`` gets cycling over ``names``, as the harness pipelines them."""
    return b"".join(line({"jsonrpc": "2.0", "id": first_id + i, "method": "prompts/get",
                          "params": {"name": names[i % len(names)], "arguments": {"topic": "x"}}})
                    for i in range(n))


def commands(size: int, work: Path, promptset: Path, bundle: Path) -> dict[str, list[str]]:
    serve = [sys.executable, "-m", "promptops", "serve"]  # no console script: one binary
    return {"floor": [sys.executable, str(FLOOR / "srv_floor.py"), "--page-size", "100"],
            "repo": [*serve, str(work / f"pkg{size}")],
            "bundle": [*serve, "--bundle", str(bundle)]}


def environment(work: Path, promptset: Path, checkout: Path | None) -> dict[str, str]:
    path = str(FLOOR) if checkout is None else f"{checkout}{os.pathsep}{FLOOR}"
    env = {**os.environ, "PROMPTSET": str(promptset), "PYTHONPATH": path,
           "PYTHONPYCACHEPREFIX": str(work / "pycache"), "PYTHONHASHSEED": "0"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def callgrind(cmd: list[str], stdin: Path, env: dict[str, str], out_dir: Path,
              extra: tuple[str, ...] = (), marker: str = "") -> dict[str, dict[int, int]]:
    """Run ``cmd`` under callgrind: {dump part: {thread: instructions}}, part "0" the end.

    With ``marker`` the threads are counted apart (``--separate-threads=yes``: valgrind
    numbers them in no fixed order, so the thread whose profile names ``marker`` is given
    as thread 0, the others as they come); without, all threads are one (thread 1)."""
    shutil.rmtree(out_dir, ignore_errors=True)
    out_dir.mkdir(parents=True)
    threads = ("--separate-threads=yes",) if marker else ()
    with stdin.open("rb") as f:
        proc = subprocess.Popen(["valgrind", "--tool=callgrind", *threads,
                                 f"--callgrind-out-file={out_dir}/cg.%p", *extra, *cmd],
                                stdin=f, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                env=env, cwd=out_dir)  # not the checkout: `-m` puts the
        # working directory first on sys.path, before --checkout's tree
        if proc.wait() != 0:
            raise SystemExit(f"{cmd} under callgrind: exit status {proc.returncode}")
    parts: dict[str, dict[int, int]] = {}
    # the server's own files only: a child forked by it (repo mode's `git status`) runs
    # under valgrind until its exec and may leave files of its own
    for path in glob.glob(str(out_dir / f"cg.{proc.pid}*")):
        m = re.fullmatch(r"cg\.\d+(?:\.(\d+))?(?:-(\d+))?", Path(path).name)
        if m is None:
            continue
        text = Path(path).read_text(encoding="utf-8", errors="replace")
        total = next((int(x.split()[1]) for x in text.splitlines()
                      if x.startswith(("summary:", "totals:"))), 0)
        thread = int(m.group(2) or 1)
        if marker and marker in text:
            thread = 0
        part = parts.setdefault(m.group(1) or "0", {})
        part[thread] = part.get(thread, 0) + total
    return parts


def per_get(cmd: list[str], env: dict[str, str], work: Path, names: list[str],
            n: int, marker: str) -> dict[str, object]:
    # Both runs answer the warm pass and n/2 gets more: whatever happens once, early or
    # late (a lazy import, the first compile, a timer), is in both, and only n gets differ.
    warm = handshake() + gets(names, len(names) + n // 2, 2)
    base, full = work / "base.jsonl", work / "full.jsonl"
    base.write_bytes(warm)
    full.write_bytes(warm + gets(names, n, 2 + len(names) + n // 2))
    a = callgrind(cmd, base, env, work / "cg-base", marker=marker)["0"]
    b = callgrind(cmd, full, env, work / "cg-full", marker=marker)["0"]
    answering = (b.get(0, 0) - a.get(0, 0)) / n
    every = (sum(b.values()) - sum(a.values())) / n
    return {"answering": answering, "all": every, "others": every - answering}


def cold(cmd: list[str], env: dict[str, str], work: Path, first_write: str) -> dict[str, object]:
    """Instructions of every thread until the initialize reply's write, and until exit."""
    req = work / "init.jsonl"
    req.write_bytes(handshake())
    parts = callgrind(cmd, req, env, work / "cg-cold", (f"--dump-before={first_write}",))
    first = parts.get("1")
    if not first:
        raise SystemExit(f"no dump before {first_write}: {parts}")
    return {"to_reply": sum(first.values()), "with_exit": sum(
        sum(p.values()) for p in parts.values())}


def warm_up(cmd: list[str], env: dict[str, str], work: Path, names: list[str]) -> None:
    """Untimed: fills the bytecode cache (of what a get imports too) and repo mode's
    build cache. Twice: on a new package repo mode's first start builds, and a build
    never imports what a start from the build cache does (the bundle check), so the
    first counted start compiled those modules from source: 45 M instructions more
    (repo 368.7 M against 323.2 M in the run after; session 15's section)."""
    req = work / "warm.jsonl"
    req.write_bytes(handshake() + gets(names, len(names), 2))
    for _ in range(2):
        with req.open("rb") as f:
            subprocess.run(cmd, stdin=f, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           env=env, check=True, timeout=600, cwd=work)


def prepare(size: int, work: Path) -> tuple[Path, Path]:
    promptset, pkg = work / f"set{size}.json", work / f"pkg{size}"
    if not promptset.exists():
        subprocess.run([sys.executable, str(FLOOR / "gen_promptset.py"), str(size),
                        str(promptset)], check=True, capture_output=True)
    dist = work / f"pkg{size}-dist"
    if not pkg.exists():
        return promptset, make_package(promptset, pkg)
    return promptset, next(dist.glob("*.bundle.json"))


def conditions(checkout: Path | None) -> str:
    commit = subprocess.run(["git", "-C", str(HERE), "log", "-1", "--format=%h %cd",
                             "--date=short"], capture_output=True, text=True,
                            check=False).stdout.strip()
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return (f"floor_instructions {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
            f"checkout {commit or '?'}"
            f"{'' if checkout is None else f' (promptops from {checkout})'}; "
            f"Python {sys.version.split()[0]}; load average {load} "
            "(instruction counts do not depend on it)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--gets", type=int, default=200, help="counted pipelined gets")
    ap.add_argument("--max-gets", type=int, default=20,
                    help="the gets cycle over this many prompts (instruction counts do not see "
                    "the CPU cache, and compiling each under callgrind is slow: a few suffice)")
    ap.add_argument("--what", default="gets,cold")
    ap.add_argument("--servers", default="floor,repo,bundle")
    ap.add_argument("--keep", type=Path, help="keep (and reuse) the packages here")
    ap.add_argument("--json-out", type=Path)
    ap.add_argument("--checkout", type=Path,
                    help="serve with the promptops package of this tree (a before/after run: "
                         "`git archive REV | tar -x -C DIR`), put first on PYTHONPATH")
    args = ap.parse_args()
    if shutil.which("valgrind") is None:
        print("valgrind is needed", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="floor-instr-")) if args.keep is None else args.keep
    work.mkdir(parents=True, exist_ok=True)
    what, servers = set(args.what.split(",")), args.servers.split(",")
    print(conditions(args.checkout) + "\n", flush=True)
    results: dict[str, object] = {}
    try:
        for size in (int(s) for s in args.sizes.split(",")):
            promptset, bundle = prepare(size, work)
            names = [p["name"] for p in json.loads(promptset.read_text())][:args.max_gets]
            env = environment(work, promptset, args.checkout)
            cmds = commands(size, work, promptset, bundle)
            rows = {}
            for label in servers:
                warm_up(cmds[label], env, work, names)
                row: dict[str, object] = {}
                if "gets" in what:
                    row["get"] = per_get(cmds[label], env, work, names, args.gets,
                                         FIRST_WRITE[label])
                if "cold" in what:
                    row["cold"] = cold(cmds[label], env, work, FIRST_WRITE[label])
                rows[label] = row
                print(f"  {size} {label}: {json.dumps(row)}", file=sys.stderr, flush=True)
            results[str(size)] = rows
            print(report(size, rows, args) + "\n", flush=True)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    if args.json_out:
        args.json_out.write_text(json.dumps(results, indent=1))
    return 0


def report(size: int, rows: dict[str, dict[str, object]], args: argparse.Namespace) -> str:
    out = [f"### {size:,} prompts (gets cycle over the first {min(size, args.max_gets):,})", "",
           "| server | instructions per get, answering thread | all threads "
           "| cold start to the first reply | cold start incl. exit |",
           "| --- | --- | --- | --- | --- |"]
    floor = rows.get("floor", {})

    def cell(row: dict[str, object], part: str, key: str, unit: float, fmt: str) -> str:
        val = (row.get(part) or {}).get(key)  # type: ignore[attr-defined]
        if val is None:
            return "-"
        text = format(val / unit, fmt)
        ref = (floor.get(part) or {}).get(key)  # type: ignore[attr-defined]
        return text if row is floor or not ref else f"{text} ({val / ref:.2f}x)"

    for label, row in rows.items():
        out.append(f"| {label} | {cell(row, 'get', 'answering', 1, ',.0f')} | "
                   f"{cell(row, 'get', 'all', 1, ',.0f')} | "
                   f"{cell(row, 'cold', 'to_reply', 1e6, ',.1f')} M | "
                   f"{cell(row, 'cold', 'with_exit', 1e6, ',.1f')} M |")
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
