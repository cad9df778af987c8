"""Generate docs/reliability.md from the fault records the hardening tests keep.

    python tests/hardening/gen_reliability.py          # write the document
    python tests/hardening/gen_reliability.py --check  # exit 1 if it is stale

The records (tests/hardening/records/*.json) are checked by the tests that observe each
fault, so the document says what a test run saw, not what someone wrote. The output
depends only on the records and on the limits in the code: sorted, no dates, no paths.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
RECORDS = HERE / "records"
MEASURED = HERE / "measured"  # benchmark figures (costs), one JSON file per section
DOC = REPO / "docs" / "reliability.md"
AREAS = ["serve process", "serve protocol fuzzing", "template security", "repository faults",
         "process faults", "package paths", "hostile content", "write faults"]


def limits() -> list[tuple[str, str, str]]:
    sys.path[:0] = [str(REPO), str(HERE.parent / "fuzz")]
    from fuzz_serve import RSS_LIMIT_MB

    from promptops.pipeline.yamlio import limits as yaml_limits
    from promptops.sandbox import limits as size
    from promptops.sandbox import nesting as template_limits
    from promptops.serve import jsonrpc as protocol
    from promptops.serve import wire
    from promptops.serve.transports import stdio

    return [
        ("message line", f"{stdio.MAX_LINE // (1024 * 1024)} MiB (newline excluded)",
         "longer: -32600, the rest of the line is discarded, the connection goes on"),
        ("JSON nesting", f"{stdio.MAX_DEPTH} levels of arrays/objects",
         "deeper: -32700 `nested deeper than ...` (Python's json would hit its recursion limit)"),
        ("JSON values", f"{wire.MAX_VALUES:,} per message (arrays, objects and the commas "
         "between items, outside strings)", "more: -32700, refused before parsing"),
        ("batch", f"{protocol.MAX_BATCH} messages; {protocol.BATCH_REPLY_BYTES // (1 << 20)} MiB "
         f"of replies; {protocol.BATCH_SECONDS:g} s of run time", "more messages: one -32600; "
         "past the reply or time budget: each further request gets a short -32603"),
        ("request time", f"{size.DEFAULT_TIMEOUT_MS / 1000:g} s of the rendering thread's CPU "
         "time per prompts/get, from validation to the last template (`limits.renderTimeoutMs`, "
         f"at most {size.MAX_TIMEOUT_MS:,} ms); served, also {size.WALL_BACKSTOP} x that of "
         "wall clock; wall clock only where threads have no CPU clock (macOS, Windows)",
         "-32603 `render took longer than ...`, enforced even in loops that call nothing"),
        ("reply size", f"{size.DEFAULT_OUTPUT_CHARS:,} characters for the whole reply: every "
         "message, resource and the description (`limits.maxOutputChars`, at most "
         f"{size.MAX_OUTPUT_CHARS:,})", "-32603 `the reply is over ...`"),
        ("work per request", f"{size.WORK_FACTOR} x the reply size, in characters built by all "
         f"operations together (a list element counts {size.ELEMENT})",
         "-32603 `the request has built more than ...`"),
        ("argument pattern", "RE2, linear time; value length x program size at most "
         "50,000 per ms of the request budget", "-32602 naming the argument"),
        ("one `*`", f"{size.MAX_OPERAND_RESULT:,} items or characters",
         "checked before allocating"),
        ("any other single operation", f"{size.MAX_VALUE:,} characters or elements (the reply "
         "size)", "`%`, `~`, `+`, `join`, block captures, printing, `tojson`, `pprint`, str "
         "methods and filters, format-spec widths: checked before allocating; shared parts of "
         "a list counted every time they occur"),
        ("integers", f"{size.MAX_INT_BITS:,} bits; exponents up to "
         f"{size.MAX_POWER_EXPONENT}", "-32603"),
        ("macro nesting", f"{size.MAX_MACRO_DEPTH} calls", "-32603 (recursive macros)"),
        ("argument values", "100,000 characters unless `maxLength` says otherwise",
         "-32602 naming the argument"),
        ("fuzzed server memory", f"VmRSS under {RSS_LIMIT_MB} MB", "checked by the fuzz driver"),
        *content_limits(yaml_limits, template_limits),
    ]


def content_limits(y: Any, t: Any) -> list[tuple[str, str, str]]:
    """What package content may hold (promptops/yaml_limits.py, template_limits.py)."""
    past = "a positioned problem (file:line:col), exit 1, before any recursive parser runs"
    return [
        ("YAML nesting", f"{y.MAX_DEPTH} levels of mappings/sequences, aliases followed",
         past),
        ("YAML nodes", f"{y.MAX_NODES:,} a document, aliases expanded", past),
        ("YAML aliases", f"repeat at most {y.MAX_ALIAS_EXPANSION:,} characters in all; no "
         "recursive anchor", past),
        ("YAML integers", f"{y.MAX_INT_DIGITS:,} digits (hex/octal: the same magnitude)", past),
        ("template block tags", f"{t.MAX_BLOCK_DEPTH} open inside each other", past),
        ("template brackets", f"{t.MAX_BRACKET_DEPTH} open inside each other", past),
        ("template expressions", f"{t.MAX_EXPRESSION_DEPTH} levels (operators, filters, "
         "attributes, calls, brackets)", past),
    ]


def render() -> str:
    records = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(RECORDS.glob("*.json"))]
    out = [
        "# Reliability: faults tried and what happened",
        "",
        "<!-- GENERATED by tests/hardening/gen_reliability.py from tests/hardening/records/;",
        "     do not edit. The tests fail when a fresh observation differs from its record or",
        "     this file differs from the records. -->",
        "",
        "Every row below is a fault a test in `tests/hardening/` or `tests/fuzz/` provokes for",
        "real (subprocesses, pipes, git repositories, signals) and the behaviour it observed.",
        "The threat model is in `SECURITY.md`.",
        "",
        "## Limits",
        "",
        "| what | limit | past it |",
        "| --- | --- | --- |",
    ]
    out += [f"| {a} | {b} | {c} |" for a, b, c in limits()]
    known = [a for a in AREAS if any(r["area"] == a for r in records)]
    others = sorted({r["area"] for r in records} - set(AREAS))
    for area in known + others:
        rows = sorted((r for r in records if r["area"] == area),
                      key=lambda r: (r["command"], r["fault"]))
        out += ["", f"## {area[:1].upper()}{area[1:]}", "",
                "| fault | command | observed behaviour | test |", "| --- | --- | --- | --- |"]
        for r in rows:
            cells = [r["fault"], r["command"], r["behaviour"], f"`{r['test']}`"]
            out.append(_row(cells))
    for path in sorted(MEASURED.glob("*.json")):
        section = json.loads(path.read_text(encoding="utf-8"))
        out += ["", f"## {section['title']}", "",
                f"Command: `{section['command']}` ({section['machine']}). {section['note']}",
                "", _row(section["columns"]), _row(["---"] * len(section["columns"]))]
        out += [_row(row) for row in section["rows"]]
    return "\n".join(out) + "\n"


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |"


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        current = DOC.read_text(encoding="utf-8") if DOC.exists() else ""
        if current != text:
            print(f"{DOC} is stale: run python tests/hardening/gen_reliability.py")
            return 1
        return 0
    DOC.write_text(text, encoding="utf-8")
    print(f"wrote {DOC.relative_to(REPO)} ({text.count(chr(10))} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
