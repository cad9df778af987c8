"""SARIF 2.1.0 for GitHub code scanning: rules with help text, stable fingerprints.

``partialFingerprints`` hash the code, file, message and the text of the line rather
than its number, so a finding that merely moves is recognised as the same alert.
"""

from __future__ import annotations

import json
from typing import Any

from promptops import __version__
from promptops.lint.output import Report
from promptops.lint.problem import Finding
from promptops.lint.registry import RULES

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
URI = "https://github.com/promptops/promptops/blob/main/docs/rules.md"


def _rule(r: Any) -> dict[str, Any]:
    return {
        "id": r.code,
        "name": r.name,
        "shortDescription": {"text": r.summary},
        "fullDescription": {"text": " ".join(r.doc.strip().split("\n\n")[0].split())},
        "help": {"text": r.doc.strip(), "markdown": r.doc.strip()},
        "helpUri": f"{URI}#{r.code.lower()}-{r.name}",
        "defaultConfiguration": {"level": r.level},
        "properties": {"tags": ["promptops"]},
    }


def render(findings: list[Finding], report: Report) -> str:
    index = {r.code: i for i, r in enumerate(RULES)}
    results = []
    for f in findings:
        results.append({
            "ruleId": f.code,
            "ruleIndex": index[f.code],
            "level": f.level,
            "message": {"text": f.message},
            "locations": [{
                "physicalLocation": {
                    "artifactLocation": {"uri": report.repo_path(f.path), "uriBaseId": "%SRCROOT%"},
                    "region": {"startLine": f.line, "startColumn": f.col},
                }
            }],
            "partialFingerprints": {
                "primaryLocationLineHash": f.fingerprint(report.line_text(f.path, f.line)),
            },
        })
    doc = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "promptops",
                "version": __version__,
                "informationUri": URI,
                "rules": [_rule(r) for r in RULES],
            }},
            "results": results,
        }],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False)
