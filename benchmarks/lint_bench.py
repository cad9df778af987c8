"""Lint wall time on generated packages of 100, 1,000 and 10,000 prompts (with partials).

Each size is linted three times through the real CLI in a fresh process: cold (no
cache entry), cached (nothing changed), and after touching one partial (a cache miss
again). Targets on a 2-core machine: 10,000 prompts cold < 10 s, cached < 1 s.
Usage: python benchmarks/lint_bench.py [SIZES...]

``--corpus N [--rounds R]`` measures real prompts instead (issue 15): the real-prompt corpus
package (tests/lint/corpus) replicated to N prompts (default 10,000) by
benchmarks/corpus_pkg.py, every prompt also including one shared partial. Each run is a fresh
process, spawn to exit, timed in wall seconds and CPU seconds (user + system of the child):
the cold ``build --no-lint`` of the same package (the yardstick), lint cold (no cache), lint
cached (JSON, and the default text output, which reads each finding's line for its excerpt),
one edited prompt, one edited partial included everywhere. The runs are interleaved in R
rounds (default 3; every edit undone and the cache removed after each) and the medians are
printed with the issue's targets and whether each is met, on wall and on CPU: on a shared
machine wall time is inflated by the load (printed), CPU time is what the run costs.

``--corpus-part tuning|heldout|both [N] [--rounds R]`` measures issue 26's speed corpus
(tests/corpus/speed: real prompts of repositories no earlier corpus used, chosen by a rule
written first, split by a hash of the path). Each part is turned into a package by
``promptops import`` (one folder import, as a team does it) and its prompts replicated to N
(default 10,000) at their real sizes (benchmarks/corpus_pkg.py ``generate_part``). Per part:
``build --no-lint`` cold, lint cold, lint cached, lint with one edited prompt (wall and CPU,
medians of R interleaved rounds, load average before and after), and lint cold / build. With
``both`` the two parts are printed side by side; only the held-out figure judges the targets.
``--corpus-dir DIR`` takes the parts from another corpus laid out the same way
(tests/corpus/speed2, the second fresh corpus of session 10); ``--distinct`` makes every copy
of the replica distinct (corpus_pkg.generate_part), as ``lint_ab.py --distinct`` does.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from genpkg import commit, generate


def _lint(pkg: Path) -> tuple[float, int]:
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "promptops", "lint", str(pkg), "--format", "json"],
        capture_output=True, text=True, check=False,
    )
    took = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"lint failed: {proc.stderr}")
    return took, proc.stdout.count('"code"')


def bench(n: int, work: Path) -> tuple[float, float, float, int]:
    pkg = generate(n, work / f"pkg{n}")
    commit(pkg)
    shutil.rmtree(pkg / ".git" / "promptops", ignore_errors=True)
    cold, findings = _lint(pkg)
    cached, _ = _lint(pkg)
    partial = pkg / "partials" / "rules.j2"
    partial.write_text(partial.read_text() + "Be brief.\n")
    changed, _ = _lint(pkg)
    return cold, cached, changed, findings


def _timed(argv: list[str], cwd: Path, stdout: list[str] | None = None) -> tuple[float, float]:
    """(wall, CPU) seconds of one promptops run in a fresh process (its output appended to
    ``stdout`` when given)."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "promptops", *argv], cwd=cwd,
                          capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{argv} failed: {proc.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if stdout is not None:
        stdout.append(proc.stdout)
    return wall, cpu


TARGETS = {  # run -> (what issue 15 asks, wall/CPU bound in seconds or None)
    "build --no-lint (cold)": ("the yardstick", None),
    "lint cold": ("<= 2x cold build, < 10 s", 10.0),
    "lint cached": ("< 1 s", 1.0),
    "lint cached, text output": ("< 1 s", 1.0),
    "lint, one edited prompt": ("< 1 s", 1.0),
    "lint, edited partial everywhere": ("none: a full re-lint", None),
}


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def _round(pkg: Path, work: Path, cold: list[str]) -> dict[str, tuple[float, float]]:
    """One measurement of every run, in an order that interleaves build and lint; the
    package is left as it was found (edits undone, lint cache removed); the cold lint's
    JSON is appended to ``cold``."""
    from corpus_pkg import PARTIAL

    lint = ["lint", ".", "--format", "json"]
    cache = pkg / ".git" / "promptops"
    shutil.rmtree(cache, ignore_errors=True)
    out = {"build --no-lint (cold)": _timed(["build", "--no-lint", ".", "-o", str(work / "out")],
                                           pkg)}
    out["lint cold"] = _timed(lint, pkg, cold)
    out["lint cached"] = _timed(lint, pkg)
    out["lint cached, text output"] = _timed(["lint", "."], pkg)
    one = sorted((pkg / "templates").glob("haiku-0.*"))[0]
    shared = pkg / PARTIAL
    kept = {one: one.read_bytes(), shared: shared.read_bytes()}
    try:
        one.write_text(one.read_text() + "Keep it short.\n")
        out["lint, one edited prompt"] = _timed(lint, pkg)
        shared.write_text(shared.read_text() + "Cite sources.\n")
        out["lint, edited partial everywhere"] = _timed(lint, pkg)
    finally:
        for path, data in kept.items():
            path.write_bytes(data)
        shutil.rmtree(cache, ignore_errors=True)
    return out


def corpus(n: int, work: Path, rounds: int) -> None:
    import os

    from corpus_pkg import generate as replicate

    pkg = replicate(n, work / f"corpus{n}")
    commit(pkg)
    samples: dict[str, list[tuple[float, float]]] = {}
    cold: list[str] = []
    for _ in range(rounds):
        for name, figures in _round(pkg, work, cold).items():
            samples.setdefault(name, []).append(figures)
    med = {name: (_median([w for w, _ in runs]), _median([c for _, c in runs]))
           for name, runs in samples.items()}
    # the findings of the last cold lint (each round leaves the package as it found it):
    # a lint run only to count them was one more cold lint per run
    findings = json.loads(cold[-1])["findings"]
    size = sum(f.stat().st_size for f in pkg.rglob("*") if f.is_file() and ".git" not in f.parts)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"{n} real prompts ({size / n / 1024:.1f} KB of package per prompt, {len(findings)} "
          f"findings); median of {rounds} interleaved rounds; {os.cpu_count()} cores, load "
          f"average {load:.1f}")
    build_wall, build_cpu = med["build --no-lint (cold)"]
    print(f"{'run':<34} {'wall s':>7} {'CPU s':>7}  {'target (issue 15)':<26} met (wall / CPU)")
    for name, (wall, cpu) in med.items():
        want, bound = TARGETS[name]
        if name == "lint cold":
            ok = (wall <= 2 * build_wall and wall < 10, cpu <= 2 * build_cpu and cpu < 10)
            met = (f"{_yes(ok[0])} ({wall / build_wall:.2f}x) / {_yes(ok[1])} "
                   f"({cpu / build_cpu:.2f}x)")
        elif bound is not None:
            met = f"{_yes(wall < bound)} / {_yes(cpu < bound)}"
        else:
            met = ""
        print(f"{name:<34} {wall:>7.2f} {cpu:>7.2f}  {want:<26} {met}".rstrip())


PART_RUNS = ["build --no-lint (cold)", "lint cold", "lint cached", "lint, one edited prompt"]


def _part_round(pkg: Path, work: Path, cold: list[str]) -> dict[str, tuple[float, float]]:
    """One measurement of each run on a speed-corpus package; edits undone, cache removed;
    the cold lint's JSON appended to ``cold``."""
    from corpus_pkg import edit_one

    lint = ["lint", ".", "--format", "json"]
    cache = pkg / ".git" / "promptops"
    shutil.rmtree(cache, ignore_errors=True)
    out = {PART_RUNS[0]: _timed(["build", "--no-lint", ".", "-o", str(work / "out")], pkg)}
    out["lint cold"] = _timed(lint, pkg, cold)
    out["lint cached"] = _timed(lint, pkg)
    path, before = edit_one(pkg)
    try:
        out["lint, one edited prompt"] = _timed(lint, pkg)
    finally:
        path.write_bytes(before)
        shutil.rmtree(cache, ignore_errors=True)
    return out


def corpus_parts(parts: list[str], n: int, work: Path, rounds: int, *,
                 corpus: Path | None = None, distinct: bool = False) -> None:
    """Issue 26's runs on each part of the speed corpus (``corpus``: another one laid out the
    same way), the parts side by side."""
    import os

    from corpus_pkg import SPEED, generate_part

    loadavg = os.getloadavg if hasattr(os, "getloadavg") else lambda: (float("nan"),) * 3
    med: dict[str, dict[str, tuple[float, float]]] = {}
    for part in parts:
        pkg = generate_part(part, n, work / f"speed-{part}", distinct=distinct,
                            corpus=(corpus or SPEED).resolve())
        commit(pkg)
        load_before = loadavg()[0]
        samples: dict[str, list[tuple[float, float]]] = {}
        cold: list[str] = []
        for _ in range(rounds):
            for name, figures in _part_round(pkg, work, cold).items():
                samples.setdefault(name, []).append(figures)
        med[part] = {name: (_median([w for w, _ in runs]), _median([c for _, c in runs]))
                     for name, runs in samples.items()}
        findings = len(json.loads(cold[-1])["findings"])  # the last round's cold lint
        size = sum(f.stat().st_size for f in (pkg / "prompts").iterdir())
        imported = len({p.name.rsplit("-", 1)[0] for p in (pkg / "prompts").iterdir()})
        print(f"{part}: {n} prompts replicated from {imported} imported prompts "
              f"({size / n / 1024:.1f} KB of prompt file each, {findings} findings); median of "
              f"{rounds} interleaved rounds; {os.cpu_count()} cores, load average "
              f"{load_before:.1f} before, {loadavg()[0]:.1f} after"
              f"{'; every copy distinct' if distinct else ''}"
              f"{f'; corpus {corpus}' if corpus is not None else ''}")
        shutil.rmtree(pkg)
    header = f"{'run':<26}"
    for part in parts:
        header += f" {part + ' wall s':>15} {part + ' CPU s':>14}"
    print(header + "  target (issue 26)")
    want = {"build --no-lint (cold)": "< 5 s", "lint cold": "<= 2x build, < 10 s",
            "lint cached": "< 1 s", "lint, one edited prompt": "< 1 s"}
    for name in PART_RUNS:
        row = f"{name:<26}"
        for part in parts:
            wall, cpu = med[part][name]
            row += f" {wall:>15.2f} {cpu:>14.2f}"
        print(f"{row}  {want[name]}")
    row = f"{'lint cold / build':<26}"
    for part in parts:
        (bw, bc), (lw, lc) = med[part][PART_RUNS[0]], med[part]["lint cold"]
        row += f" {lw / bw:>14.2f}x {lc / bc:>13.2f}x"
    print(f"{row}  <= 2x")


def _yes(ok: object) -> str:
    return "yes" if ok else "NO"


def main(sizes: list[int]) -> None:
    print(f"{'prompts':>8} {'cold s':>8} {'cached s':>9} {'1 edit s':>9} {'findings':>9}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            cold, cached, changed, findings = bench(n, Path(tmp))
            print(f"{n:>8} {cold:>8.2f} {cached:>9.2f} {changed:>9.2f} {findings:>9}")


def _size_and_rounds(args: list[str]) -> tuple[int, int]:
    rounds = int(args[args.index("--rounds") + 1]) if "--rounds" in args else 3
    size = next((int(a) for i, a in enumerate(args) if a.isdigit() and
                 (i == 0 or args[i - 1] != "--rounds")), 10_000)
    return size, rounds


if __name__ == "__main__":
    if sys.argv[1:2] == ["--corpus-part"] and len(sys.argv) > 2:
        which = sys.argv[2]
        chosen = ["tuning", "heldout"] if which == "both" else [which]
        rest = sys.argv[3:]
        corpus_dir = None
        if "--corpus-dir" in rest:
            at = rest.index("--corpus-dir")
            corpus_dir = Path(rest[at + 1])
            del rest[at:at + 2]
        distinct_copies = "--distinct" in rest
        rest = [a for a in rest if a != "--distinct"]
        n_prompts, n_rounds = _size_and_rounds(rest)
        with tempfile.TemporaryDirectory() as tmp:
            corpus_parts(chosen, n_prompts, Path(tmp), n_rounds, corpus=corpus_dir,
                         distinct=distinct_copies)
    elif sys.argv[1:2] == ["--corpus"]:
        args = sys.argv[2:]
        rounds = int(args[args.index("--rounds") + 1]) if "--rounds" in args else 3
        size = next((int(a) for i, a in enumerate(args) if a.isdigit() and
                     (i == 0 or args[i - 1] != "--rounds")), 10_000)
        with tempfile.TemporaryDirectory() as tmp:
            corpus(size, Path(tmp), rounds)
    else:
        main([int(a) for a in sys.argv[1:]] or [100, 1000, 10000])
