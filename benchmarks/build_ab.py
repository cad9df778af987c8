"""Build before/after: `promptops build --no-lint` from two checkouts on one package, interleaved.

Usage: python benchmarks/build_ab.py BEFORE [AFTER] [--corpus-part tuning|heldout]
                                     [--corpus N] [--rounds R] [--package PKG] [--distinct]
                                     [--corpus-dir DIR]
(BEFORE, AFTER: checkout roots; AFTER defaults to this checkout.)

The package is the speed corpus part replicated to N prompts (corpus_pkg.generate_part, as
lint_ab.py builds it), or ``--package``, a committed package folder. Each run is a fresh
process, spawn to exit, writing its bundle with ``--force`` into a folder of its own; CPU is
user + system of the process and its git children. Prints the median and the minimum of
the rounds, and fails when the two checkouts write different bundle bytes. ``--distinct``:
every copy of the replica distinct (``generate_part(distinct=True)``: no text repeats, as in
a real corpus of that many different prompts; issue 26 item 1, session 10). ``--corpus-dir
DIR``: the part from another corpus laid out as the speed corpus (tests/corpus/speed2).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def _run(root: Path, pkg: Path, out: Path, cache: Path) -> tuple[float, float, str]:
    """(wall, CPU, sha256 of the bundle) of one build from checkout ``root``."""
    env = {**os.environ, "PYTHONPATH": str(root), "PYTHONPYCACHEPREFIX": str(cache)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # compiling modules is not the build's cost
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "promptops", "build", "--no-lint", ".", "-o",
                           str(out), "--force"], cwd=pkg, env=env, capture_output=True,
                          text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"build from {root} failed: {proc.stderr}")
    digest = hashlib.sha256(b"".join(f.read_bytes() for f in sorted(out.iterdir())))
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), \
        digest.hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path, nargs="?", default=Path(__file__).parent.parent)
    parser.add_argument("--corpus-part", choices=("tuning", "heldout"), default="tuning")
    parser.add_argument("--corpus", type=int, default=10000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--package", type=Path, default=None)
    parser.add_argument("--distinct", action="store_true",
                        help="every copy of the replica distinct (no text repeats)")
    parser.add_argument("--corpus-dir", type=Path, default=None,
                        help="a corpus laid out as tests/corpus/speed (default: that one)")
    args = parser.parse_args()
    if args.package is not None and (args.distinct or args.corpus_dir is not None):
        raise SystemExit("--distinct and --corpus-dir need a corpus part, not --package")
    roots = {"before": args.before.resolve(), "after": args.after.resolve()}
    with tempfile.TemporaryDirectory() as tmp:
        if args.package is not None:
            pkg, what = args.package.resolve(), str(args.package)
        else:
            from corpus_pkg import SPEED, generate_part
            from genpkg import commit

            corpus = (args.corpus_dir or SPEED).resolve()
            pkg = generate_part(args.corpus_part, args.corpus, Path(tmp) / "corpus",
                                distinct=args.distinct, corpus=corpus)
            commit(pkg)
            what = (f"{args.corpus} prompts, {args.corpus_part} part of {corpus.name}"
                    f"{', every copy distinct' if args.distinct else ''}")
        cache = Path(tmp) / "pycache"
        samples: dict[str, list[tuple[float, float, str]]] = {k: [] for k in roots}
        for i in range(args.rounds + 1):  # round 0 warms the bytecode of both
            order = list(roots) if i % 2 == 0 else list(reversed(roots))
            for label in order:
                out = Path(tmp) / f"out-{label}"
                shutil.rmtree(out, ignore_errors=True)
                got = _run(roots[label], pkg, out, cache)
                if i:
                    samples[label].append(got)
    same = {s[2] for runs in samples.values() for s in runs}
    print(f"build --no-lint: {what}; {args.rounds} interleaved rounds; {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.1f}; same bundle bytes: {len(same) == 1}")
    print(f"{'':8} {'wall med':>9} {'CPU med':>8} {'CPU min':>8}")
    for label, runs in samples.items():
        print(f"{label:8} {statistics.median(r[0] for r in runs):>9.2f} "
              f"{statistics.median(r[1] for r in runs):>8.2f} {min(r[1] for r in runs):>8.2f}")
    if len(same) != 1:
        raise SystemExit("the checkouts wrote different bundles")


if __name__ == "__main__":
    main()
