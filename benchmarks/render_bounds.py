"""What the worst input of each bounded-rendering class costs: wall time and peak RSS.

    python benchmarks/render_bounds.py            # print the table
    python benchmarks/render_bounds.py --write    # also write the figures docs/reliability.md
                                                  # shows (tests/hardening/measured/)

Each input is one ``prompts/get`` through the real Renderer in a fresh interpreter, so the
peak RSS is that request's (the figure is the growth over the interpreter after imports).
The inputs are the largest each bound lets through and the first ones it refuses: a
backtracking pattern against the longest value, the biggest RE2 program at the longest
value its budget allows, list ``sum``, ``join``, printing, ``tojson`` and ``pprint`` of a
shared list, block captures, the whole reply, memory kept alive in a loop, small objects
made until the deadline, the largest sort and integer division the checks allow. Medians
of ``--runs`` runs (default 3).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent
OUT = REPO_ROOT / "tests" / "hardening" / "measured" / "bounded-rendering.json"

SHARED = "[[[1]*100]*100]*100"  # 300 list objects, 3,000,000 characters printed
CASES: list[tuple[str, str, dict[str, Any] | None, dict[str, str]]] = [
    ("pattern `([A-Z]+-?)+[0-9]+`, 41 characters (days in Python's re)", "{{ t|length }}",
     {"name": "t", "pattern": "([A-Z]+-?)+[0-9]+"}, {"t": "A" * 40 + "!"}),
    ("pattern `([A-Z]+-?)+[0-9]+`, 100,000 characters", "{{ t|length }}",
     {"name": "t", "pattern": "([A-Z]+-?)+[0-9]+"}, {"t": "AB-" * 33_333 + "!"}),
    ("606-step RE2 program at its longest value (165,016 characters)", "{{ t|length }}",
     {"name": "t", "pattern": "(?:[a-z]{0,200}x|[a-z]{0,100}b)*", "maxLength": 200_000},
     {"t": "ab" * 82_508}),
    ("`([[1]*10]*20000)|sum(start=[])` (200,000 items)",
     "{{ ([[1]*10]*20000)|sum(start=[])|length }}", None, {}),
    ("`range(100000)|join(',' * 30)`, 3.0 M characters (under the bound)",
     "{{ range(100000)|join(',' * 30)|length }}", None, {}),
    ("`range(1000)|join('x' * 1000000)` (refused)",
     "{{ range(1000)|join('x' * 1000000)|length }}", None, {}),
    (f"printing `{SHARED}` (3.0 M characters)", "{{ " + SHARED + " }}", None, {}),
    (f"printing `[{SHARED}] * 100` (300 M characters: refused)",
     "{{ [" + SHARED + "] * 100 }}", None, {}),
    (f"`{SHARED}|tojson`", "{{ (" + SHARED + ")|tojson|length }}", None, {}),
    (f"`{SHARED}|pprint`", "{{ (" + SHARED + ")|pprint|length }}", None, {}),
    ("`{% set %}` block of 300 x 900,000 characters (refused)",
     "{% set s = 'x' * 900000 %}{% set b %}{% for i in range(300) %}{{ s }}{% endfor %}"
     "{% endset %}{{ b|length }}", None, {}),
    ("5 messages of 1,000,000 characters (reply refused)", "{{ 'x' * 1000000 }}", None, {}),
    ("`l.append('x' * 1000000 ~ i)` in a loop (work limit)",
     "{% set l = [] %}{% for i in range(10000) %}{{ l.append('x' * 1000000 ~ i) or '' }}"
     "{% endfor %}", None, {}),
    ("small objects until the deadline: `ns.x = [ns.x, i ~ j]`",
     "{% set ns = namespace(x=none) %}{% for i in range(100000) %}{% for j in range(100) %}"
     "{% set ns.x = [ns.x, i ~ j] %}{% endfor %}{% endfor %}", None, {}),
    ("sort of 100,000 strings (the most the checks allow)",
     "{{ (range(100000)|map('string')|list)|sort|length }}", None, {}),
    ("sort of 400,000 strings (refused)",
     "{{ ((range(100000)|map('string')|list) * 4)|sort|length }}", None, {}),
    ("`//` at the division limit (370,000-bit by 185,000-bit integers)",
     "{% set a = 2 ** 1000 %}{% set b = (a ** 185) * 3 %}{{ (b * b // (b + 1)) % 7 }}",
     None, {}),
    ("a loop that calls nothing, until the deadline",
     "{% set s = 'x' * 20000 %}{% for a in s %}{% for b in s %}{% endfor %}{% endfor %}",
     None, {}),
]

CHILD = """
import json, resource, sys, time
from promptops.errors import RenderError
from promptops.render.mcp import error_code
from promptops.render.renderer import Renderer
bundle, arguments = json.loads(sys.stdin.read())
renderer = Renderer(bundle)
renderer.get("warm", {})
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
try:
    result = renderer.get("p", arguments)
    outcome = "rendered %d characters" % sum(len(m["content"].get("text", ""))
                                              for m in result["messages"])
except RenderError as exc:
    outcome = "%d %s" % (error_code(exc), str(exc).split(": ", 2)[-1][:90])
seconds = time.perf_counter() - start
grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) / 1024
print(json.dumps({"outcome": outcome, "seconds": seconds, "grown_mb": grown}))
"""


def bundle(text: str, spec: dict[str, Any] | None, messages: int) -> dict[str, Any]:
    msg = {"role": "user", "type": "text", "text": text}
    return {"package": {"name": "bench", "version": "1.0.0"}, "templates": {},
            "resources": {}, "prompts": [
                {"name": "p", "arguments": [spec] if spec else [], "messages": [msg] * messages},
                {"name": "warm", "arguments": [], "messages": [
                    {"role": "user", "type": "text", "text": "{{ [1]|join }}{{ 'a' ~ 1 }}"}]}]}


def run(label: str, text: str, spec: dict[str, Any] | None, args: dict[str, str]) -> dict[str, Any]:
    messages = 5 if label.startswith("5 messages") else 1
    payload = json.dumps([bundle(text, spec, messages), args])
    proc = subprocess.run([sys.executable, "-c", CHILD], input=payload, capture_output=True,
                          text=True, timeout=600, cwd=tempfile.gettempdir())
    if proc.returncode != 0:
        raise SystemExit(f"{label}: {proc.stderr}")
    return json.loads(proc.stdout)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args(argv)
    rows = []
    for label, text, spec, arguments in CASES:
        runs = [run(label, text, spec, arguments) for _ in range(args.runs)]
        rows.append({"input": label, "outcome": runs[0]["outcome"],
                     "ms": round(statistics.median(r["seconds"] for r in runs) * 1000, 1),
                     "peak_rss_mb": round(statistics.median(r["grown_mb"] for r in runs), 1)})
        r = rows[-1]
        print(f"{r['ms']:9.1f} ms {r['peak_rss_mb']:7.1f} MB  {label}: {r['outcome']}")
    if args.write:
        load = os.getloadavg()
        OUT.parent.mkdir(exist_ok=True)
        OUT.write_text(json.dumps({
            "title": "Measured cost: bounded rendering",
            "command": f"python benchmarks/render_bounds.py --runs {args.runs} --write",
            "machine": f"Python {platform.python_version()}, {os.cpu_count()} cores, load "
                       f"average {load[0]:.1f} at the end; "
                       f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d}",
            "note": "Default limits (2 s, 4,000,000 characters). Each row is one prompts/get "
                    "in a fresh process: the median wall time of the request and the growth "
                    "of the process's peak RSS over the interpreter after imports. The "
                    "deadline is the rendering thread's CPU time (a served request also has "
                    "a wall backstop of 5 x that), so on an idle machine a deadline row reads "
                    "a little over it. Its margin is the longest C call the checks allow (the "
                    "sort and division rows) plus the watchdog thread's wake-up (since session "
                    "13 it wakes 50 ms past the earliest deadline, so the render's own clock "
                    "checks raise first with their precise message; it polled every 0.1 s "
                    "before session 12).",
            "columns": ["worst input of the class", "outcome", "time", "peak RSS growth"],
            "rows": [[r["input"], r["outcome"], f"{r['ms']:,.1f} ms",
                      f"{r['peak_rss_mb']:,.1f} MB"] for r in rows],
        }, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {OUT.relative_to(REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
