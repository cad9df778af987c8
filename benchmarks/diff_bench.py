"""`promptops diff` at scale: N generated prompts, one edited shared partial.

The review case issue 16 measures: a package of N prompts (benchmarks/genpkg.py) in git,
then a commit that adds one line to ``partials/rules.j2``, which every prompt includes
through ``partials/preamble.j2`` (so every prompt is reached and must be rendered at both
ends). Prints the wall and CPU time (the process and its children: render workers, git)
of ``promptops diff HEAD~1 HEAD --format markdown``, median of ``--runs``, the comment's
size, and whether it shows the partial's source diff and a rendered diff.

``cold`` runs start without lint's cache (``.git/promptops``, as a fresh CI clone does);
``warm`` runs keep it (a commit linted before). With ``--baseline CMD`` each run of the
measured command is interleaved with a run of CMD on the same package, so both see the
same machine load; the load average is printed before and after, since the machine may
be shared and wall time alone says little then.

Usage: python benchmarks/diff_bench.py [--sizes 1000,5000] [--runs 3] [--promptops CMD]
       [--baseline CMD]   e.g. --baseline "env PYTHONPATH=/tmp/main python -m promptops"
"""

from __future__ import annotations

import argparse
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import genpkg  # noqa: E402

ENV = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@x",
       "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "b@x", "NO_COLOR": "1"}


def make_package(n: int, root: Path) -> Path:
    out = genpkg.generate(n, root / f"pkg{n}")
    genpkg.commit(out)
    rules = out / "partials" / "rules.j2"
    rules.write_text(rules.read_text() + "Cite your sources.\n")
    subprocess.run(["git", "commit", "-qam", "edit the shared partial"], cwd=out, check=True,
                   env=ENV)
    return out


def run_once(cmd: list[str], pkg: Path, out: Path, *, cold: bool) -> tuple[float, float]:
    if cold:
        shutil.rmtree(pkg / ".git" / "promptops", ignore_errors=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([*cmd, "diff", "HEAD~1", "HEAD", "--format", "markdown", "-o", str(out)],
                   cwd=pkg, check=True, env=ENV, capture_output=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def shows(text: str) -> str:
    found = []
    if "+++ HEAD: partials/rules.j2" in text:
        found.append("partial source diff")
    if "+++ HEAD: smoke" in text:
        found.append("rendered diff")
    return ", ".join(found) or "NO DIFF"


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", default="1000,5000")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--promptops", default=f"{shlex.quote(sys.executable)} -m promptops",
                    help="the command to measure (default: this interpreter's promptops)")
    ap.add_argument("--baseline", default=None,
                    help="a command to compare with, run interleaved with the measured one")
    a = ap.parse_args()
    commands = {"this": shlex.split(a.promptops)}
    if a.baseline:
        commands["baseline"] = shlex.split(a.baseline)
    print(f"load average before: {load()}  (cpus: {os.cpu_count()})")
    print(f"{'prompts':>8} {'command':>9} {'lint cache':>10} {'wall s':>8} {'cpu s':>8} "
          f"{'comment chars':>14}  shows")
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(s) for s in a.sizes.split(",")):
            pkg = make_package(n, Path(tmp))
            for cold in (True, False):
                runs: dict[str, list[tuple[float, float]]] = {k: [] for k in commands}
                texts: dict[str, str] = {}
                for _ in range(a.runs):  # interleaved: A, B, A, B ...
                    for key, cmd in commands.items():
                        md = Path(tmp) / f"review{n}-{key}.md"
                        runs[key].append(run_once(cmd, pkg, md, cold=cold))
                        texts[key] = md.read_text(encoding="utf-8")
                for key, got in runs.items():
                    print(f"{n:>8} {key:>9} {'cold' if cold else 'warm':>10} "
                          f"{statistics.median(r[0] for r in got):>8.2f} "
                          f"{statistics.median(r[1] for r in got):>8.2f} "
                          f"{len(texts[key]):>14}  {shows(texts[key])}", flush=True)
    print(f"load average after: {load()}")


if __name__ == "__main__":
    main()
