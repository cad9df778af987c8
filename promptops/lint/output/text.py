"""Human output: ``path:line:col: CODE [level] message``, the source line and a caret.

The excerpt is printed with or without colour (issue 16): a CI log is read by people too,
and the line is what they need to act. It is made safe to print: control and invisible
characters (an ANSI escape or a bidi override in the prompt would act on the reader's
terminal) are shown as ``\\u202e``-style escapes, a long line (minified JSON) is cut to a
window around the column, and the caret is aligned by display width (tabs kept, wide
characters counted twice).

A rule whose findings are the same advice on many files (``SUMMARY`` in its module: PO401,
missing descriptions) is summarised when it fires more than :data:`GROUP_OVER` times and
was not selected by name: one entry with the count and the first files, so the few
findings that need different actions are not drowned (on an imported package of 78 real
prompts, 59 lack descriptions). Every finding is still counted in the summary line, still
in the exit code, and listed one by one by ``--select CODE`` and by every machine format
(JSON, GitHub, SARIF).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from promptops.console import PLAIN_AUTO, Console
from promptops.lint.output import Report
from promptops.lint.problem import Finding
from promptops.lint.registry import BY_CODE

GROUP_OVER = 5  # findings of a summarised rule listed one by one up to this many
GROUP_NAMES = 4  # files a summary names before "and N more"
WINDOW = 120  # characters of a long source line shown around the column


@dataclass(frozen=True)
class Group:
    """One summary entry standing for many findings of one rule."""

    code: str
    name: str
    level: str
    summary: str  # the rule's SUMMARY, "{n}" filled in
    findings: tuple[Finding, ...]


def entries(findings: list[Finding], report: Report) -> list[Finding | Group]:
    """What the text format shows: the findings in order, and a summarised rule's findings
    as one :class:`Group` after them."""
    by_rule: dict[str, list[Finding]] = {}
    for f in findings:
        rule = BY_CODE.get(f.code)
        if rule is not None and rule.group is not None and f.code not in report.listed:
            by_rule.setdefault(f.code, []).append(f)
    grouped = {code for code, fs in by_rule.items() if len(fs) > GROUP_OVER}
    out: list[Finding | Group] = [f for f in findings if f.code not in grouped]
    for code in sorted(grouped):
        rule, fs = BY_CODE[code], by_rule[code]
        assert rule.group is not None
        out.append(Group(code, rule.name, fs[0].level, rule.group.format(n=len(fs)), tuple(fs)))
    return out


def render(findings: list[Finding], report: Report, console: Console = PLAIN_AUTO) -> str:
    out: list[str] = []
    for entry in entries(findings, report):
        level = console.style(entry.level, fg={"error": "red", "warning": "yellow"}.get(
            entry.level, "blue"))
        if isinstance(entry, Group):
            names = [report.shown_path(f.path) for f in entry.findings]
            more = len(names) - GROUP_NAMES
            shown = ", ".join(names[:GROUP_NAMES]) + (f" and {more} more" if more > 0 else "")
            out.append(f"{console.style(entry.code, bold=True)} [{level}] {entry.name}: "
                       f"{entry.summary}; `promptops lint --select {entry.code}` lists each:")
            out.append(f"  {shown}")
            continue
        where = console.style(f"{report.shown_path(entry.path)}:{entry.line}:{entry.col}",
                              bold=True)
        out.append(f"{where}: {entry.code} [{level}] {entry.message}")
        shown_line, pad = excerpt(report.line_text(entry.path, entry.line), entry.col)
        if shown_line.strip():
            out.append(f"  {shown_line}")
            out.append(f"  {pad}" + console.style("^", fg="green", bold=True))
    out.append(summary(findings))
    return "\n".join(out)


def excerpt(line: str, col: int) -> tuple[str, str]:
    """(the line as it is safe to print, the blanks that put a caret under ``col``).

    ``col`` is 1-based, in characters of ``line``; past the end it points just after it.
    """
    col = max(1, min(col, len(line) + 1))
    start, end = 0, len(line)
    if len(line) > WINDOW:
        start = max(0, min(col - 1 - WINDOW // 2, len(line) - WINDOW))
        end = start + WINDOW
    shown: list[str] = ["…"] if start else []
    pad: list[str] = [" "] if start else []
    for i in range(start, end):
        ch = line[i]
        text = _visible(ch)
        shown.append(text)
        if i < col - 1:
            pad.append("\t" if ch == "\t" else " " * _width(text))
    if end < len(line):
        shown.append("…")
    return "".join(shown), "".join(pad)


def _visible(ch: str) -> str:
    if ch == "\t":
        return ch
    if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") or ch in "\u00a0\u3000":
        return f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}"
    return ch


def _width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in ("W", "F") else
               0 if unicodedata.combining(c) else 1 for c in text)


def summary(findings: list[Finding]) -> str:
    errors = sum(f.level == "error" for f in findings)
    notes = sum(f.level == "info" for f in findings)
    warnings = len(findings) - errors - notes
    fixable = sum(f.fixable for f in findings)
    if not findings:
        return "no problems found"
    text = f"{errors} error{'s' if errors != 1 else ''}, {warnings} warning" \
        f"{'s' if warnings != 1 else ''}"
    if notes:
        text += f", {notes} info"
    if fixable:
        text += f" ({fixable} fixable with `promptops lint --fix`)"
    return text
