"""GitHub Actions workflow commands: each finding becomes an annotation on the diff.

GitHub shows at most 10 warning (and 10 error) annotations per step and drops the rest, so
the findings of a rule that gives the same advice on many files (``GROUP``: PO401) come after
the others: on an imported package they would otherwise take every slot. Each is still
printed, so the log has all of them.
"""

from __future__ import annotations

from promptops.lint.output import Report
from promptops.lint.output.text import summary
from promptops.lint.problem import Finding
from promptops.lint.registry import BY_CODE


def _escape(text: str, *, prop: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if prop else text


def render(findings: list[Finding], report: Report) -> str:
    out = []
    bulk = {f.code for f in findings if (r := BY_CODE.get(f.code)) and r.group is not None}
    for f in sorted(findings, key=lambda f: f.code in bulk):  # stable: otherwise as found
        kind = {"error": "error", "warning": "warning"}.get(f.level, "notice")
        props = (f"file={_escape(report.repo_path(f.path), prop=True)},line={f.line},"
                 f"col={f.col},title={_escape(f'{f.code} {f.name}', prop=True)}")
        out.append(f"::{kind} {props}::{_escape(f.message)}")
    out.append(summary(findings))
    return "\n".join(out)
