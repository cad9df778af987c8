"""What the worst hostile package content costs: `promptops check` time and peak memory.

For each class of issue 12's invariants 1 and 2 (YAML nesting, aliases, integers,
template nesting, symlinks, git paths) the worst input is built (the largest refused
and, where there is one, the most expensive one still accepted) and `promptops check`
is run on it in a fresh process, ``--runs`` times. Reported: the outcome (exit code and
first line), the median wall time, and the peak RSS (``ru_maxrss`` of the child, from
``os.wait4``), beside a baseline package. Nothing here is asserted: the tests do that;
these are figures.

    python benchmarks/hostile_bench.py [--runs 3] [--write]

``--write`` stores the figures in ``tests/hardening/measured/content.json``, which
``tests/hardening/gen_reliability.py`` renders into docs/reliability.md.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench_common import REPO_ROOT, env_info, git

OUT = REPO_ROOT / "tests" / "hardening" / "measured" / "content.json"
MANIFEST = "name: bench\nversion: 1.0.0\n"
PROMPT = ("description: d\narguments:\n  - {name: topic, required: true}\nmessages:\n"
          "  - role: user\n    text: 'About {{ topic }}'\n")


def block(body: str) -> str:
    return ("description: d\narguments:\n  - {name: topic, required: true}\nmessages:\n"
            "  - role: user\n    text: |\n" + "".join(f"      {ln}\n"
                                                      for ln in body.splitlines()))


def within_limits_template(size: int) -> str:
    """As much template text as fits in ``size``, every line at the nesting limits."""
    from promptops.sandbox import nesting as tl

    brackets = "(" * (tl.MAX_BRACKET_DEPTH - 1) + "topic" + ")" * (tl.MAX_BRACKET_DEPTH - 1)
    expr = brackets + " ~ topic" * (tl.MAX_EXPRESSION_DEPTH - 2 * tl.MAX_BRACKET_DEPTH)
    unit = ("{% if topic %}" * (tl.MAX_BLOCK_DEPTH - 1) + "{{ " + expr + " }}"
            + "{% endif %}" * (tl.MAX_BLOCK_DEPTH - 1))
    return "\n".join([unit] * max(1, size // len(unit)))


def yaml_within(size: int) -> str:
    """A prompt file of ``size`` bytes of small values nested 99 levels deep."""
    unit = "[" * 96 + "1" + "]" * 96
    return PROMPT + "x:\n" + "".join(f"  - {unit}\n" for _ in range(size // (len(unit) + 5)))


def many_nodes(lead: str = "") -> str:
    """A prompt file just under the node limit, with one schema problem to position."""
    return lead + PROMPT + "x: [" + ", ".join(["a"] * 249_900) + "]\n"


def laughs(levels: int) -> str:
    lines = [PROMPT.rstrip("\n"), "a0: &a0 [" + ", ".join(["x" * 100] * 10) + "]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def just_under_alias_bound() -> str:
    """A valid prompt whose 99 messages alias one 9,800-character text: 970,000 characters
    repeated, about the most the bound lets through, all of it in the bundle."""
    return (f"description: &a '{'x' * 9_800}'\nmessages:\n"
            + "".join("  - {role: user, text: *a}\n" for _ in range(99)))


def big_template(root: Path, size: int) -> None:
    (root / "partials").mkdir()
    (root / "partials" / "t.j2").write_text(within_limits_template(size))
    (root / "prompts" / "t.prompt.yaml").write_text(block("{% include 'partials/t.j2' %}"))


def symlink_loops(root: Path, n: int) -> None:
    (root / "partials").mkdir()
    lines = []
    for i in range(n):
        os.symlink(f"b{i}.j2", root / "partials" / f"a{i}.j2")
        os.symlink(f"a{i}.j2", root / "partials" / f"b{i}.j2")
        lines.append(f"{{% include 'partials/a{i}.j2' %}}")
    (root / "prompts" / "loops.prompt.yaml").write_text(block("\n".join(lines)))


def git_paths(root: Path, n: int) -> None:
    lines = [f"{{% include '.git/x{i}' %}}" for i in range(n)]
    (root / "prompts" / "git.prompt.yaml").write_text(block("\n".join(lines)))


CASES: list[tuple[str, str, Callable[[Path], None]]] = [
    ("baseline", "a one-prompt package", lambda r: None),
    ("YAML nesting", "40,000 nested `[` (80 KB), refused", lambda r: (
        r / "prompts" / "deep.prompt.yaml").write_text(
        PROMPT + "x: " + "[" * 40_000 + "]" * 40_000 + "\n")),
    ("YAML nesting", "900 block levels (400 KB), refused", lambda r: (
        r / "prompts" / "deep.prompt.yaml").write_text(
        PROMPT + "x:\n" + "".join(" " * i + "-\n" for i in range(900)))),
    ("YAML volume", "10 MB of values 99 levels deep (2.5 million nodes), refused", lambda r: (
        r / "prompts" / "deep.prompt.yaml").write_text(yaml_within(10_000_000))),
    ("YAML volume", "249,900 values (just under the node limit), a schema problem",
     lambda r: (r / "prompts" / "many.prompt.yaml").write_text(many_nodes())),
    ("YAML volume", "the same on the ruamel.yaml fallback (a complex key)", lambda r: (
        r / "prompts" / "many.prompt.yaml").write_text(many_nodes("? [a]\n: b\n"))),
    ("YAML aliases", "600 bytes expanding to 100 MB (billion laughs), refused", lambda r: (
        r / "prompts" / "lol.prompt.yaml").write_text(laughs(6))),
    ("YAML aliases", "aliases repeating 970,000 characters (just under the bound)", lambda r: (
        r / "prompts" / "lol.prompt.yaml").write_text(just_under_alias_bound())),
    ("YAML integers", "an integer of 1,000,000 digits, refused", lambda r: (
        r / "prompts" / "big.prompt.yaml").write_text(PROMPT + "x: " + "9" * 1_000_000 + "\n")),
    ("YAML integers", "a hex integer of 1,000,000 digits, refused", lambda r: (
        r / "prompts" / "big.prompt.yaml").write_text(PROMPT + "x: 0x" + "f" * 1_000_000 + "\n")),
    ("template nesting", "a 20,000-term `+` chain, refused", lambda r: (
        r / "prompts" / "t.prompt.yaml").write_text(block("{{ " + " + ".join(["1"] * 20_000)
                                                          + " }}"))),
    ("template nesting", "5,000 nested `{% if %}`, refused", lambda r: (
        r / "prompts" / "t.prompt.yaml").write_text(block("{% if 1 %}" * 5_000 + "x"
                                                          + "{% endif %}" * 5_000))),
    ("template nesting", "1 MB of template at every nesting limit (accepted)",
     lambda r: big_template(r, 1_000_000)),
    ("symlinks", "1,000 symlink loops, each included", lambda r: symlink_loops(r, 1_000)),
    ("git paths", "1,000 includes of `.git/...` files", lambda r: git_paths(r, 1_000)),
]


def measure(root: Path, runs: int) -> tuple[str, float, float]:
    times, peaks, outcome = [], [], ""
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "promptops", "check", str(root)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                env={**os.environ, "NO_COLOR": "1"})
        assert proc.stderr is not None
        err = proc.stderr.read().decode(errors="replace")
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        times.append(time.perf_counter() - start)
        peaks.append(usage.ru_maxrss / 1024)
        lines = [ln for ln in err.splitlines() if ln.strip()]
        said = next((ln for ln in lines if re.match(r"\S+:\d+:\d+: |error: ", ln)
                     and "[warning]" not in ln), lines[-1] if lines else "")
        outcome = f"exit {proc.returncode}" + (f": {said.split(': ', 1)[-1][:90]}"
                                               if proc.returncode else "")
    return outcome, statistics.median(times), statistics.median(peaks)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--write", action="store_true", help=f"store the figures in {OUT}")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(REPO_ROOT))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, (cls, what, make) in enumerate(CASES):
            root = Path(tmp) / f"case{i}"
            (root / "prompts").mkdir(parents=True)
            (root / "promptops.yaml").write_text(MANIFEST)
            (root / "prompts" / "ok.prompt.yaml").write_text(PROMPT)
            make(root)
            git(root, "init", "-q")
            size = sum(p.stat().st_size for p in root.rglob("*")
                       if p.is_file() and not p.is_symlink() and ".git" not in p.parts)
            outcome, seconds, peak = measure(root, args.runs)
            rows.append({"class": cls, "input": what, "bytes": size, "outcome": outcome,
                         "seconds": round(seconds, 3), "peak_rss_mb": round(peak, 1)})
            print(f"{cls:18} {what:62} {seconds * 1000:8.0f} ms {peak:7.1f} MB  {outcome}",
                  flush=True)
    info = env_info()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    doc = {"title": "Measured cost: hostile package content",
           "command": f"python benchmarks/hostile_bench.py --runs {args.runs} --write",
           "machine": f"Python {info['python']}, {info['cpus']} cores, load average {load} at "
                      f"the end; {info['date'][:10]}",
           "note": "`promptops check` (validate, lint, test) on the worst input of each class "
                   "of invariants 1 and 2, in a fresh process: the largest input refused and "
                   "the most expensive one each limit still lets through. Median wall time, "
                   "spawn to exit; peak RSS of the whole process (the baseline row is the "
                   "interpreter and imports).",
           "columns": ["class", "worst input", "outcome", "time", "peak RSS"],
           "rows": [[r["class"], r["input"], r["outcome"], f"{r['seconds'] * 1000:,.0f} ms",
                     f"{r['peak_rss_mb']:.0f} MB"] for r in rows]}
    if args.write:
        OUT.parent.mkdir(parents=True, exist_ok=True)
        OUT.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {OUT.relative_to(REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
