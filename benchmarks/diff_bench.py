"""`promptops diff` at scale: N generated prompts, one edited shared partial.

The review case issue 16 measures: a package of N prompts (benchmarks/genpkg.py) in git,
then a commit that adds one line to ``partials/rules.j2``, which every prompt includes
through ``partials/preamble.j2``. Prints the wall and CPU time of
``promptops diff HEAD~1 HEAD --format markdown`` (median of ``--runs``), the comment's
size, and whether it shows the partial's source diff and a rendered diff.

Usage: python benchmarks/diff_bench.py [--sizes 1000,5000] [--runs 3] [--promptops CMD]
"""

from __future__ import annotations

import argparse
import os
import resource
import shlex
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


def run_once(cmd: list[str], pkg: Path, out: Path) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([*cmd, "diff", "HEAD~1", "HEAD", "--format", "markdown", "-o", str(out)],
                   cwd=pkg, check=True, env=ENV, capture_output=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", default="1000,5000")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--promptops", default=f"{shlex.quote(sys.executable)} -m promptops",
                    help="the command to measure (default: this interpreter's promptops)")
    a = ap.parse_args()
    cmd = shlex.split(a.promptops)
    print(f"{'prompts':>8} {'wall s':>8} {'cpu s':>8} {'comment chars':>14}  shows")
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(s) for s in a.sizes.split(",")):
            pkg = make_package(n, Path(tmp))
            md = Path(tmp) / f"review{n}.md"
            runs = [run_once(cmd, pkg, md) for _ in range(a.runs)]
            text = md.read_text(encoding="utf-8")
            shows = []
            if "+++ HEAD: partials/rules.j2" in text:
                shows.append("partial source diff")
            if "+++ HEAD: smoke" in text:
                shows.append("rendered diff")
            print(f"{n:>8} {statistics.median(r[0] for r in runs):>8.2f} "
                  f"{statistics.median(r[1] for r in runs):>8.2f} {len(text):>14}  "
                  f"{', '.join(shows) or 'NO DIFF'}")


if __name__ == "__main__":
    main()
