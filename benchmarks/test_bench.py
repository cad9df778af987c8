"""Benchmark `promptops test`: 10,000 cases over 1,000 generated prompts.

Each generated prompt (benchmarks/genpkg.py) gets a test file of 10 cases exercising
contains/not_contains/matches/roles/messages/max_chars and error expectations; the
smoke cases come on top. Prints wall times of the whole CLI run, serial and parallel;
the target is under 10 s on 2 cores. Figures only, no assertions on time.
Usage: python benchmarks/test_bench.py [N_PROMPTS]
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from genpkg import generate

CASES = """\
  - name: topic {j}
    arguments: {{topic: "subject {j}"}}
    expect:
      - {{messages: 2, roles: [assistant, user], max_chars: 2000}}
      - {{message: 1, contains: ["subject {j}"], not_contains: ["{{{{"], matches: ["(?s)subject"]}}
"""
ERROR = """\
  - name: bad tone {j}
    arguments: {{topic: x, tone: loud}}
    expect: {{error: {{code: -32602, message_contains: tone}}}}
"""


def write_tests(root: Path, n: int) -> int:
    (root / "tests").mkdir(exist_ok=True)
    total = 0
    for i in range(n):
        body = "".join(CASES.format(j=j) if j < 8 else ERROR.format(j=j) for j in range(10))
        (root / "tests" / f"task_{i:05d}.test.yaml").write_text(
            f"prompt: task_{i:05d}\ncases:\n{body}")
        total += 10
    return total


def timed(args: list[str], cwd: Path) -> tuple[float, str]:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "promptops", *args], cwd=cwd,
                          capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"promptops {' '.join(args)} failed:\n{proc.stdout}{proc.stderr}")
    return elapsed, proc.stdout.strip().splitlines()[-1]


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    with tempfile.TemporaryDirectory() as tmp:
        root = generate(n, Path(tmp) / "pkg")
        cases = write_tests(root, n)
        print(f"{n} prompts, {cases} cases (+{n} smoke cases)")
        for label, args in (("auto (-j default)", []), ("serial (-j 1)", ["-j", "1"]),
                            ("parallel (-j 2)", ["-j", "2"])):
            elapsed, summary = timed(["test", *args], root)
            print(f"{label:20s} {elapsed:6.2f} s  ({summary})")
        elapsed, summary = timed(["test", "--format", "json", "--junit-xml", "j.xml"], root)
        print(f"{'json + junit':20s} {elapsed:6.2f} s  ({summary[:40]})")


if __name__ == "__main__":
    main()
