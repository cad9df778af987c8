"""SARIF 2.1.0 for GitHub code scanning: rules with help text, stable fingerprints.

``partialFingerprints`` hash the code, file, message and the text of the line rather
than its number, so a finding that merely moves is recognised as the same alert.
Links (``informationUri``, each rule's ``helpUri``) come from ``[project.urls]``
through :mod:`promptops.about` and are left out when none is set: the full help text
travels in the log itself, so a link is a convenience, never the only documentation.
"""

from __future__ import annotations

import json
from typing import Any

from promptops import __version__
from promptops.about import docs_url, project_urls
from promptops.lint.output import Report
from promptops.lint.problem import Finding
from promptops.lint.registry import RULES

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


# SARIF 2.1.0 levels: "note" is its name for information.
_LEVEL = {"error": "error", "warning": "warning", "info": "note"}

def _rule(r: Any) -> dict[str, Any]:
    rule: dict[str, Any] = {
        "id": r.code,
        "name": r.name,
        "shortDescription": {"text": r.summary},
        "fullDescription": {"text": " ".join(r.doc.strip().split("\n\n")[0].split())},
        "help": {"text": r.doc.strip(), "markdown": r.doc.strip()},
        "defaultConfiguration": {"level": _LEVEL[r.level]},
        "properties": {"tags": ["promptops"]},
    }
    help_uri = docs_url("rules.md", f"{r.code.lower()}-{r.name}")
    if help_uri:
        rule["helpUri"] = help_uri
    return rule


def render(findings: list[Finding], report: Report) -> str:
    index = {r.code: i for i, r in enumerate(RULES)}
    results = []
    for f in findings:
        results.append({
            "ruleId": f.code,
            "ruleIndex": index[f.code],
            "level": _LEVEL[f.level],
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
    driver: dict[str, Any] = {"name": "promptops", "version": __version__}
    home = project_urls().get("Homepage")
    if home:
        driver["informationUri"] = home
    driver["rules"] = [_rule(r) for r in RULES]
    doc = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": driver},
            "results": results,
        }],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False)
