"""`serve --worktree` loses no early save (issue 24, item 5): the count of N runs, under load.

Each run spawns ``promptops serve --worktree PKG`` and saves a prompt 10 ms (``--delay``)
after an anchor:

* ``start``: after the process was spawned (the issue's acceptance);
* ``initialize``: after the ``initialize`` reply came back - the gap in which the old
  server answered but did not watch yet, where a save was lost for good.

Then the client sends ``notifications/initialized`` and ``prompts/get``: the run passes
when the new text is served at once, or the old text is followed by
``notifications/prompts/list_changed`` and a get of the new text (within ``--timeout``).
Saves alternate between in place and temp-file-and-rename. ``--burners`` processes spin
on the CPU meanwhile (default: one per core), so the server starts slowly, as on a busy
laptop. Prints one line per anchor: ``start: 100/100 served (97 at once, 3 announced)``.

    python benchmarks/worktree_early_save.py [--runs 100] [--burners N] [--delay 0.01]
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

from bench_common import BenchError, Conn, env_info, git, now, promptops_cmd

PROTOCOL = "2025-11-25"
MANIFEST = "name: live\nversion: 0.1.0\ndescription: live edits\n"
OLD = "description: Say hello\nmessages:\n  - role: user\n    text: Hello!\n"
NEW_TEXT = "Hello, saved early!"
BURN = "import time\nwhile True:\n    time.perf_counter()\n"


def save(path: Path, text: str, *, rename: bool) -> None:
    if rename:
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    else:
        path.write_text(text, encoding="utf-8")


def package(root: Path) -> Path:
    (root / "prompts").mkdir(parents=True)
    (root / "promptops.yaml").write_text(MANIFEST)
    (root / "prompts" / "hello.prompt.yaml").write_text(OLD)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "start")
    return root


def text_of(conn: Conn) -> str:
    res = conn.request("prompts/get", {"name": "hello", "arguments": {}})
    return str(res["messages"][0]["content"]["text"])


def one_run(root: Path, anchor: str, delay: float, *, rename: bool, timeout: float) -> str:
    """'at once', 'announced', or 'LOST: why'."""
    prompt = root / "prompts" / "hello.prompt.yaml"
    save(prompt, OLD, rename=False)
    time.sleep(0.05)  # the reset is older than the process
    conn = Conn([*promptops_cmd(), "serve", "--worktree", str(root)], timeout)
    try:
        if anchor == "start":
            time.sleep(max(0.0, delay - (now() - conn.t_spawn)))
            save(prompt, OLD.replace("Hello!", NEW_TEXT), rename=rename)
        conn.request("initialize", {"protocolVersion": PROTOCOL, "capabilities": {},
                                    "clientInfo": {"name": "early_save", "version": "1"}})
        if anchor == "initialize":
            time.sleep(delay)
            save(prompt, OLD.replace("Hello!", NEW_TEXT), rename=rename)
        conn.notify("notifications/initialized")
        if text_of(conn) == NEW_TEXT:
            return "at once"
        deadline = now() + timeout
        while not any(n.get("method") == "notifications/prompts/list_changed"
                      for n in conn.notifications):
            msg = json.loads(conn.readline(deadline))
            if isinstance(msg, dict) and "id" not in msg:
                conn.notifications.append(msg)
        got = text_of(conn)
        return "announced" if got == NEW_TEXT else f"LOST: announced, but served {got!r}"
    except BenchError as exc:
        return f"LOST: {exc}"
    finally:
        conn.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=100, help="runs per anchor (default 100)")
    ap.add_argument("--burners", type=int, default=os.cpu_count() or 2,
                    help="CPU-burning processes during the runs (default: one per core)")
    ap.add_argument("--delay", type=float, default=0.010, help="seconds after the anchor")
    ap.add_argument("--timeout", type=float, default=20.0)
    ap.add_argument("--anchors", default="start,initialize")
    args = ap.parse_args()
    info = env_info()
    print(f"# {info.get('date', '')} load average at start: {os.getloadavg()}", flush=True)
    burners = [subprocess.Popen([sys.executable, "-c", BURN]) for _ in range(args.burners)]
    failed = 0
    try:
        with tempfile.TemporaryDirectory(prefix="early-save-") as tmp:
            root = package(Path(tmp) / "pkg")
            for anchor in args.anchors.split(","):
                verdicts: dict[str, int] = {}
                t0 = now()
                for run in range(args.runs):
                    v = one_run(root, anchor, args.delay, rename=run % 2 == 0, timeout=args.timeout)
                    verdicts[v] = verdicts.get(v, 0) + 1
                    if v.startswith("LOST"):
                        print(f"  run {run + 1}: {v}", flush=True)
                ok = verdicts.get("at once", 0) + verdicts.get("announced", 0)
                failed += args.runs - ok
                print(f"{anchor}: {ok}/{args.runs} served ({verdicts.get('at once', 0)} at "
                      f"once, {verdicts.get('announced', 0)} announced) with {args.burners} "
                      f"burners, save {args.delay * 1e3:g} ms after the {anchor} "
                      f"[{now() - t0:.0f} s]", flush=True)
    finally:
        for b in burners:
            b.kill()
            b.wait()
    print(f"# load average at end: {os.getloadavg()}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
