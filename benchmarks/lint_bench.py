"""Lint wall time on generated packages of 100, 1,000 and 10,000 prompts (with partials).

Each size is linted three times through the real CLI in a fresh process: cold (no
cache entry), cached (nothing changed), and after touching one partial (a cache miss
again). Targets on a 2-core machine: 10,000 prompts cold < 10 s, cached < 1 s.
Usage: python benchmarks/lint_bench.py [SIZES...]

``--corpus N`` measures real prompts instead (issue 15): the real-prompt corpus package
(tests/lint/corpus) replicated to N prompts by benchmarks/corpus_pkg.py, every prompt also
including one shared partial. It reports, each in a fresh process, wall and CPU seconds of:
cold (no cache), cached, one edited prompt, one edited partial included everywhere, and the
cold ``build --no-lint`` of the same package (the issue's yardstick: cold lint at most 2x it).
"""

from __future__ import annotations

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


def _timed(argv: list[str], cwd: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of one promptops run in a fresh process."""
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
    return wall, cpu


def corpus(n: int, work: Path) -> None:
    from corpus_pkg import PARTIAL
    from corpus_pkg import generate as replicate

    pkg = replicate(n, work / f"corpus{n}")
    commit(pkg)
    lint = ["lint", ".", "--format", "json"]
    rows = [("build --no-lint (cold)", _timed(["build", "--no-lint", ".", "-o", str(work / "out")],
                                              pkg))]
    shutil.rmtree(pkg / ".git" / "promptops", ignore_errors=True)
    rows.append(("lint cold", _timed(lint, pkg)))
    rows.append(("lint cached", _timed(lint, pkg)))
    one = sorted((pkg / "templates").glob("haiku-0.*"))[0]
    one.write_text(one.read_text() + "Keep it short.\n")
    rows.append(("lint, one edited prompt", _timed(lint, pkg)))
    shared = pkg / PARTIAL
    shared.write_text(shared.read_text() + "Cite sources.\n")
    rows.append(("lint, edited partial everywhere", _timed(lint, pkg)))
    size = sum(f.stat().st_size for f in pkg.rglob("*") if f.is_file() and ".git" not in f.parts)
    print(f"{n} real prompts ({size / n / 1024:.1f} KB of package per prompt)")
    print(f"{'run':<34} {'wall s':>7} {'CPU s':>7}")
    for name, (wall, cpu) in rows:
        print(f"{name:<34} {wall:>7.2f} {cpu:>7.2f}")
    build_cpu, lint_cpu = rows[0][1][1], rows[1][1][1]
    print(f"cold lint / cold build --no-lint (CPU): {lint_cpu / build_cpu:.2f}x")


def main(sizes: list[int]) -> None:
    print(f"{'prompts':>8} {'cold s':>8} {'cached s':>9} {'1 edit s':>9} {'findings':>9}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            cold, cached, changed, findings = bench(n, Path(tmp))
            print(f"{n:>8} {cold:>8.2f} {cached:>9.2f} {changed:>9.2f} {findings:>9}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--corpus"]:
        with tempfile.TemporaryDirectory() as tmp:
            corpus(int(sys.argv[2]) if len(sys.argv) > 2 else 10_000, Path(tmp))
    else:
        main([int(a) for a in sys.argv[1:]] or [100, 1000, 10000])
