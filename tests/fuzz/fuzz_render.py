"""Render fuzz driver: pathological patterns and large-step templates against the budget.

    python tests/fuzz/fuzz_render.py --seconds 5 --seed 1

Each case is one prompts/get through the real :class:`~promptops.render.renderer.Renderer` of a
bundle whose limits are small (a short deadline, so many cases fit in the time):

* a *pattern* case compiles a generated pattern the way a package load does (nested and
  overlapping quantifiers, big counted repetitions, Unicode classes, constructs RE2 lacks)
  and matches a generated value against it (long runs that make backtracking engines
  explode);
* a *template* case applies a generated chain of filters, operators, methods and block
  captures to big or heavily shared values (``[[[1]*100]*100]*100``, a doubled
  ``namespace`` list, a million ``<``), sometimes inside a loop.

Every case must either succeed within the output bound or fail with a RenderError
(-32602/-32603) whose message is one clear line without a memory address, and must end
within the deadline plus :data:`MARGIN_S` of the rendering thread's CPU time (the bound is
CPU time, docs/reliability.md: on a loaded host the wall clock of a case that keeps its
bound can be many times longer). Anything else is a violation; any other
exception is a crash. The process's peak RSS is reported at the end (the test bounds it).
Output is a few ``name: value`` lines, then the violations, if any.
"""

from __future__ import annotations

import argparse
import random
import resource
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent))

from promptops.errors import RenderError
from promptops.render.mcp import INTERNAL_ERROR, INVALID_PARAMS, error_code
from promptops.render.renderer import Renderer
from promptops.sandbox.patterns import PatternError, compile_pattern

TIMEOUT_MS = 300
MARGIN_S = 1.0  # a loaded 2-core machine delays the watchdog thread; measured overruns are ms
LIMITS = {"renderTimeoutMs": TIMEOUT_MS}

ATOMS = ["a", "[a-z]", "[A-Z]", "\\w", "\\d", ".", "[ab]", "x", "-", "\\p{L}", "(?:a|ab)",
         "(?:a|a)", "\\s"]
BAD = ["(a)\\1", "a(?=b)", "(?<=a)b", "a++", "(?>a)", "a{2000}", "(?P<n>a)(?P=n)", "(?x)a",
       "(", "[a-", "a{3,1}", "\\"]
ALPHABETS = ["a", "ab", "aA-", "A-", "a!", "xab", "é漢a", "a\n", "1a-", "AB-!"]

VALUES = [
    "[[[1]*100]*100]*100", "'x' * 1000000", "'<' * 999999", "range(100000)|list",
    "(10**1000)**300", "ns.dag", "ns.tup", "big", "'a.' * 500000", "('.' * 5000) ~ 'x.'",
    "[big] * 1000", "{'k': big}", "d", "d.items()|list", "'é' * 100000", "'ab ' * 300000",
    "[ns.dag, ns.dag]", "cycler(1, 2)", "[1, 'a', (1, 'a')]", "(['a'] * 1000)|join(big)",
]
FILTERS = [
    "join", "join('x' * 100000)", "sum", "sum(start=[])", "sum(start=())", "tojson",
    "tojson(indent=64)", "pprint", "string", "list", "unique|list", "sort", "dictsort",
    "groupby('x')", "min", "max", "reverse|list", "first", "last", "length", "e", "escape",
    "forceescape", "safe", "striptags", "title", "upper", "lower", "capitalize", "trim",
    "truncate(10**9)", "wordwrap(1)", "wordwrap(10**9)", "center(10**7)", "center(5000)",
    "indent(10**6)", "indent(3, true, true)", "replace('x', 'x' * 10000)", "replace('', '--')",
    "urlize", "urlencode", "xmlattr", "batch(10**7, 'f')|list", "batch(3)|list",
    "slice(10**6)|list", "slice(3)|list", "round(10**7, 'ceil')", "round(-10**7)", "int",
    "float", "abs", "wordcount", "filesizeformat", "format(big)", "map('string')|list",
    "select|list", "count", "default('z')", "items|list", "random",
]
OPERATORS = ["~ big", "+ big", "* 1000", "* 10", "% (big,)", "== ns.dag", "in ns.dag",
             "// 7", "- []", "~ ns.dag", "== ns.tup"]
METHODS = [".join(['a'] * 100000)", ".split()", ".center(10**8)", ".ljust(10**6)",
           ".replace('a', 'a' * 1000)", ".format(big, big)", ".encode()", ".count('a')",
           ".upper()", ".expandtabs(10**6)", ".zfill(10**9)", ".splitlines()"]
PRELUDE = ("{% set ns = namespace(dag=[1], tup=(1,)) %}{% for i in range(K) %}"
           "{% set ns.dag = [ns.dag, ns.dag] %}{% set ns.tup = (ns.tup, ns.tup) %}{% endfor %}"
           "{% set big = 'y' * B %}{% set d = {'b': 1, 'a': big, 'c': [big] * 3} %}")


def pattern_case(rng: random.Random) -> tuple[str, str]:
    if rng.random() < 0.15:
        return rng.choice(BAD), "aaaa"
    parts = []
    for _ in range(rng.randint(1, 4)):
        atom = rng.choice(ATOMS)
        inner = atom + rng.choice(["+", "*", "?", "{0,200}", "{1,50}", "", "+?"])
        if rng.random() < 0.6:
            inner = f"({inner}{rng.choice(['', '-?', '|' + rng.choice(ATOMS) + '+'])})"
            inner += rng.choice(["+", "*", "{1,30}", "{0,1000}", ""])
        parts.append(inner)
    pattern = "".join(parts) + rng.choice(["", "[0-9]+", "!", "$"])
    alphabet = rng.choice(ALPHABETS)
    value = "".join(rng.choice(alphabet) for _ in range(rng.choice([41, 500, 5000, 90_000])))
    return pattern, value + rng.choice(["", "!", "1"])


def template_case(rng: random.Random) -> str:
    value = rng.choice(VALUES)
    expr = f"({value})"
    for _ in range(rng.randint(1, 3)):
        kind = rng.random()
        if kind < 0.6:
            expr = f"({expr}|{rng.choice(FILTERS)})"
        elif kind < 0.85:
            expr = f"({expr} {rng.choice(OPERATORS)})"
        else:
            expr = f"(({expr}|string){rng.choice(METHODS)})"
    body = rng.choice([
        "{{ EXPR }}", "{{ EXPR|length }}", "{% set s %}{{ EXPR }}{{ EXPR }}{% endset %}{{ s }}",
        "{% filter upper %}{{ EXPR }}{% endfilter %}",
        "{% macro m() %}{{ caller() }}{{ caller() }}{% endmacro %}{% call m() %}{{ EXPR }}"
        "{% endcall %}",
        "{% for i in range(N) %}{{ EXPR }}{% endfor %}",
        "{% set l = [] %}{% for i in range(N) %}{{ l.append(EXPR) or '' }}{% endfor %}"
        "{{ l|length }}",
    ]).replace("EXPR", expr).replace("N", str(rng.choice([3, 100, 10_000])))
    prelude = PRELUDE.replace("K", str(rng.choice([3, 20, 40]))).replace(
        "B", str(rng.choice([10, 100_000, 900_000])))
    return prelude + body


def run_case(b: dict[str, Any], arguments: dict[str, str],
             outcomes: dict[str, int]) -> tuple[str | None, float]:
    """(violation or None, CPU seconds) of one prompts/get; counts the outcome's kind."""
    start = time.thread_time()
    try:
        result = Renderer(b).get("p", arguments)
        size = sum(len(m["content"].get("text", "")) for m in result["messages"])
        problem = f"reply of {size} characters" if size > 4_000_000 else None
        outcomes["rendered"] = outcomes.get("rendered", 0) + 1
    except RenderError as exc:
        message = str(exc)
        kind = message.split(": ", 2)[-1].split(":")[0][:40] if error_code(exc) == INTERNAL_ERROR \
            else "-32602"
        outcomes[kind] = outcomes.get(kind, 0) + 1
        problem = None
        if error_code(exc) not in (INVALID_PARAMS, INTERNAL_ERROR):
            problem = f"code {error_code(exc)}"
        elif not message or "\n" in message or " at 0x" in message or "Traceback" in message:
            problem = f"unclear error {message[:200]!r}"
    elapsed = time.thread_time() - start
    if problem is None and elapsed > TIMEOUT_MS / 1000 + MARGIN_S:
        problem = f"took {elapsed:.2f} s of CPU time"
    return problem, elapsed


def _peak_mb() -> float:
    """This driver's own peak resident memory, in MiB.

    Linux's ``VmHWM`` is the high-water mark of this program's memory alone; ``ru_maxrss``
    also keeps, across ``exec``, what the forking parent had resident at the fork, so a
    driver started by a large pytest worker used to report the worker's size (261 and
    298 MB in two CI runs, against the driver's own 50-100 MB)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS
    return peak / (2**20 if sys.platform == "darwin" else 2**10)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--min-cases", type=int, default=0,
                    help="go on past --seconds until this many cases ran (a loaded host "
                         "then covers as much as an idle one)")
    ap.add_argument("--verbose", action="store_true", help="also count the outcomes by kind")
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    stop = time.monotonic() + args.seconds
    counts = {"pattern": 0, "template": 0, "refused at load": 0}
    violations: list[str] = []
    crashes: list[str] = []
    outcomes: dict[str, int] = {}
    slowest = 0.0
    while time.monotonic() < stop or counts["pattern"] + counts["template"] < args.min_cases:
        if rng.random() < 0.3:
            pattern, value = pattern_case(rng)
            counts["pattern"] += 1
            try:
                compile_pattern(pattern)  # what the model validator runs on load
            except PatternError as exc:
                counts["refused at load"] += 1
                if not str(exc) or "\n" in str(exc):
                    violations.append(f"pattern {pattern!r}: unclear load error {exc}")
                continue
            spec = {"name": "v", "pattern": pattern, "maxLength": 200_000}
            text, arguments = "{{ v|length }}", {"v": value}
            label = f"pattern {pattern!r} x {len(value)} chars"
        else:
            counts["template"] += 1
            text, arguments, spec = template_case(rng), {}, None
            label = f"template {text[-160:]!r}"
        b = {"package": {"name": "fuzz", "version": "1.0.0", "limits": LIMITS},
             "templates": {}, "resources": {},
             "prompts": [{"name": "p", "arguments": [spec] if spec else [],
                          "messages": [{"role": "user", "type": "text", "text": text}]}]}
        try:
            problem, elapsed = run_case(b, arguments, outcomes)
        except Exception as exc:  # a crash: anything but a RenderError
            crashes.append(f"{label}: {type(exc).__name__}: {exc}"[:400])
            continue
        slowest = max(slowest, elapsed)
        if problem is not None:
            violations.append(f"{label}: {problem}")
    peak_mb = _peak_mb()
    print(f"cases: {counts['pattern'] + counts['template']}")
    print(f"pattern cases: {counts['pattern']} ({counts['refused at load']} refused at load)")
    print(f"template cases: {counts['template']}")
    print(f"crashes: {len(crashes)}")
    print(f"violations: {len(violations)}")
    print(f"slowest case ms: {slowest * 1000:.0f} of CPU time (deadline {TIMEOUT_MS} ms)")
    print(f"peak rss mb: {peak_mb:.0f}")
    if args.verbose:
        for kind, n in sorted(outcomes.items(), key=lambda kv: -kv[1]):
            print(f"  outcome {n:5d} {kind}")
    for line in crashes + violations:
        print(f"  {line}")
    return 1 if crashes or violations else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
