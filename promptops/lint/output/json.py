"""Machine output, a stable schema (version 1, documented in docs/lint.md)::

    {"version": 1, "package": "...", "findings": [{"path", "line", "column", "code",
     "name", "level", "message", "fixable"}],
     "summary": {"errors", "warnings", "fixable"[, "info"]}}
"""

from __future__ import annotations

import json

from promptops.lint.output import Report
from promptops.lint.problem import Finding


def render(findings: list[Finding], report: Report) -> str:
    errors = sum(f.level == "error" for f in findings)
    notes = sum(f.level == "info" for f in findings)
    summary = {
        "errors": errors,
        "warnings": len(findings) - errors - notes,
        "fixable": sum(f.fixable for f in findings),
    }
    if notes:  # only with info rules selected: the default schema is unchanged
        summary["info"] = notes
    doc = {
        "version": 1,
        "package": report.package,
        "findings": [f.to_json() for f in findings],
        "summary": summary,
    }
    return json.dumps(doc, indent=2, ensure_ascii=False)
