"""The bundle shape check before and after a change, in one run (serve's cold path).

``serve --bundle`` parses a bundle and checks its whole shape (``bundle_check.valid``)
before it answers anything, so the check is part of cold start. This times, in one
process and interleaved (so machine load hits both alike), the check of the current
tree against the ``bundle_check.py`` of another revision (default ``main``) over the same
parsed bundle, and the whole ``parse_bundle`` for scale. It also times importing the
module in a fresh interpreter (what serve's start pays).

With ``--ref-tree DIR`` (a checkout of the other revision, e.g. ``git worktree add --detach
DIR main``) it also times serve's cold start over the bundle in both trees, interleaved: from
spawning ``promptops serve --bundle`` to its reply to ``initialize`` (the bundle is parsed and
checked before that reply).

Wall-clock figures on a loaded machine move by more than the difference, so ``--only
{ref,now} --calls N`` runs one side's check N times and nothing else, for
``valgrind --tool=callgrind --callgrind-out-file=/dev/null python ... --calls 0`` and
``--calls 5``: the difference of the two instruction counts, over 5, is one check's cost,
whatever else the machine does.

Usage: python benchmarks/bundle_check_bench.py BUNDLE.json [--ref main] [--rounds 15]
       [--ref-tree DIR] [--only ref|now --calls N]
(a 10,000-prompt bundle: ``python benchmarks/genpkg.py 10000 DIR`` then
``promptops build DIR --worktree -o OUT``). Standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def _module_at(ref: str) -> types.ModuleType:
    """``promptops/pipeline/bundle_check.py`` as ``ref`` holds it, imported under another name."""
    source = subprocess.run(["git", "show", f"{ref}:promptops/pipeline/bundle_check.py"],
                            cwd=REPO_ROOT, check=True, capture_output=True, text=True).stdout
    module = types.ModuleType(f"bundle_check_at_{ref}")
    module.__file__ = f"<{ref}>/bundle_check.py"
    exec(compile(source, module.__file__, "exec"), module.__dict__)  # our own file, at a revision
    return module


def _best(fn: Callable[[], object], rounds: int) -> list[float]:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return times


def _import_ms(rounds: int) -> float:
    code = ("import time; s = time.perf_counter(); import promptops.pipeline.bundle_check; "
            "print((time.perf_counter() - s) * 1000)")
    runs = [float(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                                 text=True, cwd=REPO_ROOT).stdout) for _ in range(rounds)]
    return statistics.median(runs)


def _cold_start_ms(tree: Path, bundle: Path) -> float:
    """Spawn to the ``initialize`` reply of ``serve --bundle``, run from ``tree``."""
    init = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"}}}) + "\n"
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "promptops", "serve", "--bundle", str(bundle)],
                            cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)},
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(init.encode())
    proc.stdin.flush()
    line = proc.stdout.readline()
    took = (time.perf_counter() - start) * 1000
    proc.stdin.close()
    proc.wait(timeout=30)
    assert b'"result"' in line, line[:200]
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bundle", type=Path)
    parser.add_argument("--ref", default="main")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--ref-tree", type=Path, help="a checkout of --ref, for serve's start")
    parser.add_argument("--only", choices=("ref", "now"), help="run one side's check only")
    parser.add_argument("--calls", type=int, default=1, help="with --only: how many times")
    args = parser.parse_args()
    from promptops.pipeline import bundle_check
    from promptops.pipeline.bundle import parse_bundle

    data = args.bundle.read_bytes()
    bundle = json.loads(data)
    before = _module_at(args.ref)
    if args.only:
        check = before.valid if args.only == "ref" else bundle_check.valid
        for _ in range(args.calls):
            assert check(bundle)
        return
    assert before.valid(bundle) and bundle_check.valid(bundle)
    old: list[float] = []
    new: list[float] = []
    for _ in range(args.rounds):  # interleaved: load drifts hit both
        old += _best(lambda: before.valid(bundle), 1)
        new += _best(lambda: bundle_check.valid(bundle), 1)
    load = _best(lambda: parse_bundle(data, "bench"), max(3, args.rounds // 3))
    o, n, ld = statistics.median(old), statistics.median(new), statistics.median(load)
    print(f"prompts: {len(bundle['prompts'])}")
    print(f"valid() at {args.ref}: {o:.1f} ms   now: {n:.1f} ms   ({(n - o) / o:+.1%})")
    print(f"parse_bundle now: {ld:.1f} ms; the check's change is {(n - o) / ld:+.1%} of it")
    print(f"import promptops.pipeline.bundle_check (fresh interpreter, median): "
          f"{_import_ms(max(3, args.rounds // 3)):.1f} ms")
    if args.ref_tree:
        starts: dict[str, list[float]] = {"ref": [], "now": []}
        for _ in range(max(3, args.rounds // 2)):
            starts["ref"].append(_cold_start_ms(args.ref_tree.resolve(), args.bundle.resolve()))
            starts["now"].append(_cold_start_ms(REPO_ROOT, args.bundle.resolve()))
        o, n = statistics.median(starts["ref"]), statistics.median(starts["now"])
        print(f"serve --bundle to the initialize reply, median: at {args.ref} {o:.0f} ms, "
              f"now {n:.0f} ms ({(n - o) / o:+.1%}); min {min(starts['ref']):.0f} / "
              f"{min(starts['now']):.0f} ms")


if __name__ == "__main__":
    main()
