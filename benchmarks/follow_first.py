"""The first commits of a serve session at any size, in process: where their CPU goes.

``growth.py`` times a commit to ``list_changed`` through a real ``promptops serve``; at
100,000 prompts one such run is most of an hour on a shared machine. This drives the same
objects in one process (``Follower`` with serve's lint gate, a ``Server`` whose ``swap``
is the ``on_change``), so the first commit of a session can be timed and profiled alone:

    python benchmarks/follow_first.py REPO PKG [PKG ...] [--commits 3] [--profile FILE]

REPO is a git repository with the package PKG in it (``genpkg.py N DIR --git``: then both
are DIR), or several (``growth.py``'s ``many`` layout: all served by one follower, the
commits changing the first), its build cache filled (a first run fills it: a full build and
a full lint, not timed). Each commit rewrites one prompt's description on the checked-out
branch; the time is CPU (``process_time``) and wall from after ``git commit`` to the end of
``swap``, which is when ``list_changed`` is written, then the deferred work (build and lint
caches) apart. ``--profile`` writes cProfile stats of the first commit
(``--profile-commit``: another). ``--changes`` says what each commit does, in turn:
``touch`` (the default: one prompt's description), ``remove`` (a prompt file removed),
``remove-own`` (a prompt removed with the template only it used: the template leaves the
bundle too), ``drop`` (one prompt's include of the shared preamble dropped); e.g.
``--commits 4 --changes touch,remove,remove-own,drop``.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import subprocess
import sys
import time
from pathlib import Path

from bench_common import GIT_ENV


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("repo", type=Path)
    ap.add_argument("pkg", type=Path, nargs="+")
    ap.add_argument("--commits", type=int, default=3)
    ap.add_argument("--profile", type=Path)
    ap.add_argument("--profile-commit", type=int, default=1,
                    help="which commit --profile profiles (default 1: the first)")
    ap.add_argument("--rotate", action="store_true",
                    help="commit k changes package k (in turn), not always the first")
    ap.add_argument("--no-gate", action="store_true")
    ap.add_argument("--changes", default="touch",
                    help="what the commits do, in turn: touch, remove, remove-own, drop")
    ap.add_argument("--warm-up", action="store_true",
                    help="warm the follower up first (what serve does at start at 20,000 "
                    "prompts and more, and serve --http always), timed apart")
    a = ap.parse_args()
    t0, c0 = time.perf_counter(), time.process_time()
    from promptops.__main__ import _LintGate
    from promptops.serve.catalog import Catalog
    from promptops.serve.follow import Follower
    from promptops.serve.methods import Settings
    from promptops.serve.server import Server

    def log(m: str) -> None:
        print("  log:", m[:200], file=sys.stderr)

    gate = None if a.no_gate else _LintGate()
    follower = Follower(a.pkg, ref=None, log=log, gate=gate)
    server = Server(Catalog(follower.initial()), Settings())
    print(f"start: {time.process_time() - c0:.2f} s CPU, {time.perf_counter() - t0:.2f} s wall "
          f"({follower.how})", flush=True)
    if a.warm_up:
        t0, c0 = time.perf_counter(), time.process_time()
        follower.warm_up()
        print(f"warm-up: {time.process_time() - c0:.2f} s CPU, "
              f"{time.perf_counter() - t0:.2f} s wall", flush=True)
    every = [sorted((pkg / "prompts").glob("*.prompt.yaml")) for pkg in a.pkg]
    kinds = [x.strip() for x in a.changes.split(",") if x.strip()]
    for k in range(a.commits):
        kind = kinds[k % len(kinds)]
        touched = a.pkg[k % len(a.pkg)] if a.rotate else a.pkg[0]
        change(kind, pick(kind, every[a.pkg.index(touched)], k))
        subprocess.run(["git", "commit", "-qam", f"{kind} {k}"], cwd=a.repo,
                       check=True, env=GIT_ENV)
        store = follower._store
        follower._store = lambda: None  # type: ignore[method-assign]
        profiled = a.profile and k + 1 == a.profile_commit
        prof = cProfile.Profile(time.process_time) if profiled else None
        t0, c0, g0 = time.perf_counter(), time.process_time(), _children_cpu()
        if prof:
            prof.enable()
        follower._moved(server.swap)
        if prof:
            prof.disable()
            prof.dump_stats(str(a.profile))
        c1, t1, g1 = time.process_time(), time.perf_counter(), _children_cpu()
        store()
        follower._store = store  # type: ignore[method-assign]
        c2 = time.process_time()
        print(f"commit {k + 1} ({kind}): {c1 - c0:.3f} s CPU (+ {g1 - g0:.3f} s in git), "
              f"{t1 - t0:.3f} s wall to list_changed "
              f"({follower.how[touched.resolve()]}); deferred {c2 - c1:.3f} s CPU", flush=True)
    return 0


def _children_cpu() -> float:
    """The CPU of the waited-for children so far (the git processes a commit spawns)."""
    t = os.times()
    return t.children_user + t.children_system


def pick(kind: str, prompts: list[Path], k: int) -> Path:
    """The prompt file commit ``k`` changes: one still there (an earlier run may have
    removed some) and, for ``remove-own``, a tenth one (it has a template of its own), for
    ``drop`` one that still includes the preamble."""
    live = [p for p in prompts[1:] if p.exists()]
    if kind == "remove-own":
        return next(p for p in live if _number(p) % 10 == 0)
    if kind == "drop":
        return [p for p in live if "partials/preamble.j2" in p.read_text()][k]
    return live[k]


def _number(prompt: Path) -> int:
    """The genpkg number of ``task_XXXXX.prompt.yaml`` (``pNN_task_XXXXX`` in growth.py's
    ``many`` layout)."""
    return int(prompt.name.split("task_")[1][:5])


def change(kind: str, target: Path) -> None:
    """Make the working tree change one commit of ``--changes`` commits (``-a`` takes it)."""
    if kind.startswith("remove"):
        target.unlink()
        if kind == "remove-own":  # genpkg: every tenth prompt has a template of its own
            own = target.parent.parent / "templates" / f"t{_number(target)}.md.j2"
            if not own.exists():
                raise SystemExit(f"{target.name} has no template of its own")
        return
    text = target.read_text()
    if kind == "drop":
        new = text.replace('{% include "partials/preamble.j2" %}', "", 1)
        if new == text:
            raise SystemExit(f"{target.name} includes no preamble")
        target.write_text(new)
        return
    line0 = next(x for x in text.splitlines() if x.startswith("description:"))
    target.write_text(text.replace(line0, f"description: follow_first {time.time()}", 1))


if __name__ == "__main__":
    sys.exit(main())
