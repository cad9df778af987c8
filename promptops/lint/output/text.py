"""Human output: ``path:line:col: CODE [level] message``, excerpts when colour is on."""

from __future__ import annotations

from promptops.console import PLAIN_AUTO, Console
from promptops.lint.output import Report
from promptops.lint.problem import Finding


def render(findings: list[Finding], report: Report, console: Console = PLAIN_AUTO) -> str:
    out: list[str] = []
    color = console.use_color()
    for f in findings:
        where = console.style(f"{report.shown_path(f.path)}:{f.line}:{f.col}", bold=True)
        level = console.style(f.level, fg="red" if f.level == "error" else "yellow")
        out.append(f"{where}: {f.code} [{level}] {f.message}")
        if color:
            src = report.line_text(f.path, f.line)
            if src:
                out.append(f"  {src}")
                out.append("  " + " " * (f.col - 1) + console.style("^", fg="green", bold=True))
    out.append(summary(findings))
    return "\n".join(out)


def summary(findings: list[Finding]) -> str:
    errors = sum(f.level == "error" for f in findings)
    warnings = len(findings) - errors
    fixable = sum(f.fixable for f in findings)
    if not findings:
        return "no problems found"
    text = f"{errors} error{'s' if errors != 1 else ''}, {warnings} warning" \
        f"{'s' if warnings != 1 else ''}"
    if fixable:
        text += f" ({fixable} fixable with `promptops lint --fix`)"
    return text
