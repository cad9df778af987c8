"""Lint before/after: two checkouts of promptops on the same real-prompt package, interleaved.

A change to lint's structure (issue 25: rules declare their scope, one strategy per change
kind, the cache key stamps the validation code too) must not make lint slower. This lints the
real-prompt corpus replicated to N prompts (benchmarks/corpus_pkg.py) with each checkout in
turn, a fresh process per run: cold (no cache), cached (nothing changed) and one edited
prompt template (the incremental path), R rounds, the checkouts alternating which goes first.
It prints the medians (wall and CPU seconds of the child) and checks that both checkouts
print the same JSON findings.

Usage: python benchmarks/lint_ab.py BEFORE [AFTER] [--corpus N] [--rounds R]
                                    [--corpus-part tuning|heldout] [--package corpus|tuning|heavy]
                                    [--distinct] [--pycache DIR] [--corpus-dir DIR]
(BEFORE, AFTER: checkout roots, e.g. /work/main; AFTER defaults to this checkout.)

``--corpus-part`` measures a part of issue 26's speed corpus instead (tests/corpus/speed,
imported and replicated to N prompts by corpus_pkg.generate_part): each round also times each
checkout's cold ``build --no-lint`` (the yardstick) and prints lint cold / build before and
after, so issue 26's before/after is one run. Tune on ``tuning``; ``heldout`` is measured only.
``--package heavy`` measures benchmarks/heavy_pkg.py's synthetic prompts instead (long,
branchy, include-heavy: the shape issue 26 describes); ``--package tuning`` is
``--corpus-part tuning``; it is timed against the build too. ``--distinct`` makes every copy of
a ``--corpus-part`` replica distinct (a line of its own first in each message and template
file: corpus_pkg.generate_part), so lint's work once per distinct text is paid per prompt,
as on a corpus where no text repeats. ``--corpus-dir DIR`` takes the part from another
corpus laid out like tests/corpus/speed (tests/corpus/speed2: the second fresh corpus of
session 10).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from corpus_pkg import generate
from genpkg import commit

RUNS = ("lint cold", "lint cached", "lint, one edited prompt")
BUILD = "build --no-lint (cold)"
PYCACHE = Path(tempfile.gettempdir()) / f"lint-ab-pycache-{os.getpid()}"  # --pycache: kept


def _timed(root: Path, pkg: Path, argv: tuple[str, ...] = ("lint", ".", "--format", "json"),
           ) -> tuple[float, float, str]:
    """(wall, CPU, stdout) of ``promptops lint`` from checkout ``root``, in a fresh process.
    Both checkouts' bytecode is cached in one folder of the run's own (a checkout with stale
    or no __pycache__, or PYTHONDONTWRITEBYTECODE, would pay for compiling every module)."""
    env = {**os.environ, "PYTHONPATH": str(root), "PYTHONPYCACHEPREFIX": str(PYCACHE)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "promptops", *argv],
                          cwd=pkg, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in ((0,) if argv[0] == "build" else (0, 1)):
        # a build that fails stops before the bundle: it would time half a build
        raise SystemExit(f"{argv[0]} from {root} failed: {proc.stderr}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), \
        proc.stdout


def _round(root: Path, pkg: Path, *, part: bool = False,
           ) -> tuple[dict[str, tuple[float, float]], list[str]]:
    from corpus_pkg import edit_one

    cache = pkg / ".git" / "promptops"
    shutil.rmtree(cache, ignore_errors=True)
    out: dict[str, tuple[float, float]] = {}
    texts = []
    if part:  # the yardstick, in the same round as the lint runs it divides
        built = pkg.parent / f"build-out-{hashlib.sha256(str(root).encode()).hexdigest()[:8]}"
        wall, cpu, _ = _timed(root, pkg, ("build", "--no-lint", ".", "-o", str(built),
                                          "--force"))
        out[BUILD] = (wall, cpu)
        # the bundle's bytes are compared too: a faster build must write the same file
        texts += [hashlib.sha256(f.read_bytes()).hexdigest() for f in built.iterdir()]
    for name in RUNS[:2]:
        wall, cpu, text = _timed(root, pkg)
        out[name] = (wall, cpu)
        texts.append(text)
    found = [] if part else sorted((pkg / "templates").glob("haiku-0.*"))
    if found:
        one = found[0]
        kept = one.read_bytes()
        one.write_text(one.read_text() + "Keep it short.  \n")  # a new finding too
    else:
        one, kept = edit_one(pkg)
    try:
        wall, cpu, text = _timed(root, pkg)
        out[RUNS[2]] = (wall, cpu)
        texts.append(text)
    finally:
        one.write_bytes(kept)
        shutil.rmtree(cache, ignore_errors=True)
    return out, texts


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path, nargs="?", default=Path(__file__).parent.parent)
    parser.add_argument("--corpus", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--corpus-part", choices=("tuning", "heldout"), default=None)
    parser.add_argument("--package", choices=("corpus", "tuning", "heavy"), default="corpus")
    parser.add_argument("--distinct", action="store_true",
                        help="no two copies of a --corpus-part replica share a text")
    parser.add_argument("--pycache", type=Path, default=None,
                        help="bytecode folder of both checkouts, kept for the next run (default: "
                             "one of this run's own, removed at the end)")
    parser.add_argument("--corpus-dir", type=Path, default=None,
                        help="the speed corpus to take --corpus-part from "
                             "(default tests/corpus/speed)")
    args = parser.parse_args()
    global PYCACHE
    kept = args.pycache is not None
    if kept:  # runs of one suite session compile each checkout once, not once per run
        PYCACHE = args.pycache.resolve()
    if args.package == "tuning":
        args.corpus_part = "tuning"
    replica = args.corpus_part is not None
    if args.distinct and not replica:
        raise SystemExit("--distinct needs --corpus-part (heavy's texts are distinct already)")
    if args.corpus_dir is not None and not replica:
        raise SystemExit("--corpus-dir needs --corpus-part")
    part = replica or args.package == "heavy"  # timed against the build in the same rounds
    roots = {"before": args.before.resolve(), "after": args.after.resolve()}
    with tempfile.TemporaryDirectory() as tmp:
        if replica:
            from corpus_pkg import SPEED, generate_part

            pkg = generate_part(args.corpus_part, args.corpus, Path(tmp) / "corpus",
                                distinct=args.distinct,
                                corpus=(args.corpus_dir or SPEED).resolve())
        elif args.package == "heavy":
            from heavy_pkg import generate as heavy

            pkg = heavy(args.corpus, Path(tmp) / "corpus")
        else:
            pkg = generate(args.corpus, Path(tmp) / "corpus")
        commit(pkg)
        for root in dict.fromkeys(roots.values()):  # warm-up: bytecode for both (once for
            _timed(root, pkg)                        # a checkout against itself)
        samples: dict[str, dict[str, list[tuple[float, float]]]] = {k: {} for k in roots}
        outputs: dict[str, list[str]] = {}
        for i in range(args.rounds):
            order = list(roots) if i % 2 == 0 else list(reversed(roots))
            for label in order:
                figures, texts = _round(roots[label], pkg, part=part)
                outputs[label] = texts
                for name, pair in figures.items():
                    samples[label].setdefault(name, []).append(pair)
    if not kept:
        shutil.rmtree(PYCACHE, ignore_errors=True)
    same = outputs["before"] == outputs["after"]
    load = os.getloadavg()[0]
    origin = "the speed corpus" if args.corpus_dir is None else str(args.corpus_dir)
    what = (f" ({args.corpus_part} part of {origin}"
            f"{', every copy distinct' if args.distinct else ''})" if replica else "")
    kind = "synthetic heavy prompts" if args.package == "heavy" and not replica else "real prompts"
    print(f"{args.corpus} {kind}{what}; median of {args.rounds} interleaved rounds; "
          f"{os.cpu_count()} cores, load average {load:.1f}; "
          f"{'same bundle bytes and ' if part else ''}same findings: {same}")
    print(f"{'run':<26} {'before wall':>11} {'after wall':>10} {'before CPU':>10} "
          f"{'after CPU':>9} {'CPU after/before':>16}")
    med = {label: {name: tuple(_median([p[k] for p in runs]) for k in (0, 1))
                   for name, runs in samples[label].items()} for label in roots}
    for name in ((BUILD, *RUNS) if part else RUNS):
        (bw, bc), (aw, ac) = med["before"][name], med["after"][name]
        print(f"{name:<26} {bw:>11.2f} {aw:>10.2f} {bc:>10.2f} {ac:>9.2f} {ac / bc:>16.2f}")
    if part:
        ratio = {label: (med[label]["lint cold"][0] / med[label][BUILD][0],
                         med[label]["lint cold"][1] / med[label][BUILD][1]) for label in roots}
        print(f"{'lint cold / build':<26} {ratio['before'][0]:>10.2f}x {ratio['after'][0]:>9.2f}x "
              f"{ratio['before'][1]:>9.2f}x {ratio['after'][1]:>8.2f}x")
    if not same:
        raise SystemExit("the checkouts print different findings (or build different bundles)")


if __name__ == "__main__":
    main()
