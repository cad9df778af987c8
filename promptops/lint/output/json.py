"""Machine output, a stable schema (version 1, documented in docs/lint.md)::

    {"version": 1, "package": "...", "findings": [{"path", "line", "column", "code",
     "name", "level", "message", "fixable"}], "summary": {"errors", "warnings", "fixable"}}
"""

from __future__ import annotations

import json

from promptops.lint.output import Report
from promptops.lint.problem import Finding


def render(findings: list[Finding], report: Report) -> str:
    errors = sum(f.level == "error" for f in findings)
    doc = {
        "version": 1,
        "package": report.package,
        "findings": [f.to_json() for f in findings],
        "summary": {
            "errors": errors,
            "warnings": len(findings) - errors,
            "fixable": sum(f.fixable for f in findings),
        },
    }
    return json.dumps(doc, indent=2, ensure_ascii=False)
