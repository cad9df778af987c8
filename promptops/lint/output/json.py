"""Machine output, a stable schema (version 1, documented in docs/lint.md)::

    {"version": 1, "package": "...", "findings": [{"path", "line", "column", "code",
     "name", "level", "message", "fixable"}],
     "summary": {"errors", "warnings", "fixable"[, "info"]}}
"""

from __future__ import annotations

import json

from promptops.lint.output import Report
from promptops.lint.problem import Finding

_PLACE = "\0findings\0"  # where the findings go in the document
_STR = json.encoder.encode_basestring  # what json.dumps uses (ensure_ascii=False), in C


def _value(value: object) -> str:
    """One scalar as ``json.dumps(..., ensure_ascii=False)`` writes it."""
    if isinstance(value, str):
        return str(_STR(value))
    if value is True or value is False:  # json.dumps(True) builds an encoder each call
        return "true" if value else "false"
    if isinstance(value, int):
        return int.__repr__(value)
    return json.dumps(value, ensure_ascii=False)


def _findings(findings: list[Finding]) -> str:
    """The findings array as ``json.dumps(doc, indent=2)`` writes it at the document's second
    level. With ``indent`` json.dumps runs its Python encoder, which took 0.4 s of CPU for
    10,000 findings, more than the rest of a cached or one-edit run; every finding is a
    flat object of scalars, so its lines are written here (tests/lint/test_lint_json_output.py
    compares the two)."""
    if not findings:
        return "[]"
    items = [",\n".join(f"      {_STR(key)}: {_value(value)}" for key, value in f.to_json().items())
             for f in findings]
    return "[\n    {\n" + "\n    },\n    {\n".join(items) + "\n    }\n  ]"


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
        "findings": _PLACE,
        "summary": summary,
    }
    # the last occurrence: only integers follow the findings (the summary)
    head, tail = json.dumps(doc, indent=2, ensure_ascii=False).rsplit(json.dumps(_PLACE), 1)
    return head + _findings(findings) + tail
