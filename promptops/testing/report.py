"""Reports of a run: readable text, JSON for tools, JUnit XML for CI systems.

Text puts what a failing case needs on screen at once: where the case is
(``path:line:col``, so an editor can jump there), the arguments it sent, each failed
check, and a unified diff of rendered text rather than escaped JSON.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from promptops.testing.cases import Case
from promptops.testing.runner import Outcome
from promptops.testing.suite import SuiteResult

_SHOWN_LINES = 40  # of a rendered transcript, unless verbose


def text_lines(result: SuiteResult, *, verbose: bool = False) -> list[str]:
    out: list[str] = []
    for case, outcome in zip(result.cases, result.outcomes, strict=True):
        if outcome.status in ("failed", "error"):
            out += _failure_block(case, outcome, verbose=verbose)
        elif verbose:
            why = case.skip or case.expect_invalid
            reason = f" ({why})" if outcome.status == "skipped" else ""
            out.append(f"{outcome.status.upper()} {case.id}{reason}")
    snaps = result.snapshots
    out += [f"wrote new snapshot {p}" for p in snaps.written]
    out += [f"updated snapshot {p}" for p in snaps.updated]
    out += [f"removed obsolete snapshot {p}" for p in snaps.removed]
    out += [f"obsolete snapshot {p}: no case uses it (remove it with --update-snapshots)"
            for p in snaps.obsolete]
    out.append(result.summary())
    return out


def _failure_block(case: Case, outcome: Outcome, *, verbose: bool) -> list[str]:
    out = [f"{'FAILED' if outcome.status == 'failed' else 'ERROR'} {case.id}",
           f"  at {case.where}",
           f"  arguments: {json.dumps(case.arguments, ensure_ascii=False)}"]
    has_diff = False
    for failure in outcome.failures:
        out.append(f"  - {failure.message}")
        if failure.diff:
            has_diff = True
            out += [f"    {line}" for line in failure.diff.rstrip("\n").split("\n")]
    if outcome.rendered and not has_diff:
        lines = outcome.rendered.rstrip("\n").split("\n")
        out.append("  rendered:")
        shown = lines if verbose else lines[:_SHOWN_LINES]
        out += [f"    {line}" for line in shown]
        if len(shown) < len(lines):
            out.append(f"    … {len(lines) - len(shown)} more lines (-v shows all)")
    out.append("")
    return out


def as_json(result: SuiteResult) -> dict[str, object]:
    snaps = result.snapshots
    return {
        "ok": result.ok,
        "summary": {"passed": result.count("passed"), "failed": result.count("failed"),
                    "skipped": result.count("skipped"), "errors": result.count("error")},
        "cases": [
            {"prompt": c.prompt, "name": c.name, "path": c.path, "line": c.line, "col": c.col,
             "smoke": c.smoke, "arguments": c.arguments, "status": o.status,
             **({"skip": c.skip or c.expect_invalid} if o.status == "skipped" else {}),
             "failures": [{"message": f.message, **({"diff": f.diff} if f.diff else {})}
                          for f in o.failures]}
            for c, o in zip(result.cases, result.outcomes, strict=True)
        ],
        "snapshots": {"written": snaps.written, "updated": snaps.updated,
                      "removed": snaps.removed, "obsolete": snaps.obsolete},
    }


def junit_xml(result: SuiteResult) -> bytes:
    """Surefire/Jenkins-style JUnit XML: one testsuite per prompt, in first-run order."""
    package = result.package.manifest.name
    suites: dict[str, list[tuple[Case, Outcome]]] = {}
    for case, outcome in zip(result.cases, result.outcomes, strict=True):
        suites.setdefault(case.prompt, []).append((case, outcome))
    totals = _counts(list(zip(result.cases, result.outcomes, strict=True)))
    del totals["skipped"]  # jenkins-junit.xsd counts skips per <testsuite> only
    root = ET.Element("testsuites", totals)
    root.set("name", f"promptops test {package}")
    for prompt, items in suites.items():
        suite = ET.SubElement(root, "testsuite", {"name": f"{package}.{prompt}", **_counts(items)})
        for case, outcome in items:
            tc = ET.SubElement(suite, "testcase", {
                "name": case.name, "classname": f"{package}.{prompt}",
                "time": f"{outcome.seconds:.6f}"})
            if outcome.status == "skipped":
                # a text-only element in jenkins-junit.xsd: the reason is its content
                ET.SubElement(tc, "skipped").text = case.skip or case.expect_invalid or "skipped"
            elif outcome.status in ("failed", "error"):
                tag = "failure" if outcome.status == "failed" else "error"
                el = ET.SubElement(tc, tag, {"message": outcome.failures[0].message,
                                             "type": "AssertionError" if tag == "failure"
                                             else "InternalError"})
                el.text = "\n".join(_failure_block(case, outcome, verbose=True))
            if outcome.status != "skipped":
                out = ET.SubElement(tc, "system-out")
                out.text = f"{case.where}\narguments: {json.dumps(case.arguments)}\n"
    ET.indent(root)
    data: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return data + b"\n"


def _counts(items: list[tuple[Case, Outcome]]) -> dict[str, str]:
    def n(status: str) -> str:
        return str(sum(1 for _, o in items if o.status == status))

    return {"tests": str(len(items)), "failures": n("failed"), "errors": n("error"),
            "skipped": n("skipped"), "time": f"{sum(o.seconds for _, o in items):.6f}"}
