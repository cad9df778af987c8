"""GitHub Actions workflow commands: each finding becomes an annotation on the diff."""

from __future__ import annotations

from promptops.lint.output import Report
from promptops.lint.output.text import summary
from promptops.lint.problem import Finding


def _escape(text: str, *, prop: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if prop else text


def render(findings: list[Finding], report: Report) -> str:
    out = []
    for f in findings:
        kind = {"error": "error", "warning": "warning"}.get(f.level, "notice")
        props = (f"file={_escape(report.repo_path(f.path), prop=True)},line={f.line},"
                 f"col={f.col},title={_escape(f'{f.code} {f.name}', prop=True)}")
        out.append(f"::{kind} {props}::{_escape(f.message)}")
    out.append(summary(findings))
    return "\n".join(out)
