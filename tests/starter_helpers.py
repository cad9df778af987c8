"""Checks on the starter package shared by the init tests.

``evaluate`` applies the issue-5 test-file assertions to a rendered result, so the
starter's own tests are known to hold before the real runner exists; the runner must
agree with these semantics (contains/matches search the rendered text of the checked
messages; ``message: N`` scopes a check to one message).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from jsonschema import Draft7Validator, Draft202012Validator

from promptops.errors import RenderError
from promptops.render import Renderer

SHARED = Path("/work/shared")
ASSERTION_KINDS = frozenset(
    {"messages", "roles", "contains", "not_contains", "matches", "equals", "max_chars",
     "snapshot", "error"}
)


def mcp_validator(definition: str, revision: str = "2025-11-25") -> Draft7Validator:
    """A validator for one definition of the official MCP JSON Schema."""
    schema = json.loads((SHARED / "mcp-schema" / revision / "schema.json").read_text())
    defs_key = "$defs" if "$defs" in schema else "definitions"
    ref = {"$ref": f"#/{defs_key}/{definition}", defs_key: schema[defs_key]}
    cls = Draft202012Validator if "2020-12" in schema.get("$schema", "") else Draft7Validator
    return cls(ref)  # type: ignore[no-any-return]


def message_text(message: dict[str, Any]) -> str:
    content = message["content"]
    if content["type"] == "text":
        return str(content["text"])
    if content["type"] == "resource":
        return str(content["resource"].get("text", ""))
    return ""


def evaluate(
    renderer: Renderer, prompt: str, case: dict[str, Any], snapshots: Path
) -> list[str]:
    """The failures of one test case (empty when it passes)."""
    expects = case["expect"] if isinstance(case["expect"], list) else [case["expect"]]
    try:
        result = renderer.get(prompt, case.get("arguments", {}))
    except RenderError as exc:
        errs = [e["error"] for e in expects if "error" in e]
        if not errs:
            return [f"unexpected error {exc.code}: {exc}"]
        want = errs[0]
        out = []
        if want.get("code") not in (None, exc.code):
            out.append(f"error code {exc.code} != {want['code']}")
        if want.get("message_contains", "") not in str(exc):
            out.append(f"error {exc} lacks {want['message_contains']!r}")
        return out
    failures: list[str] = []
    for exp in expects:
        msgs = result["messages"]
        if "message" in exp:
            msgs = [msgs[exp["message"]]]
        text = "\n".join(message_text(m) for m in msgs)
        if "error" in exp:
            failures.append("expected an error, got a result")
        if "messages" in exp and len(msgs) != exp["messages"]:
            failures.append(f"{len(msgs)} messages != {exp['messages']}")
        if "roles" in exp and [m["role"] for m in msgs] != exp["roles"]:
            failures.append(f"roles {[m['role'] for m in msgs]} != {exp['roles']}")
        failures += [f"missing {s!r}" for s in exp.get("contains", []) if s not in text]
        failures += [f"unwanted {s!r}" for s in exp.get("not_contains", []) if s in text]
        failures += [f"no match {r!r}" for r in exp.get("matches", []) if not re.search(r, text)]
        if "equals" in exp and msgs != exp["equals"]:
            failures.append(f"messages differ from equals: {msgs}")
        if "max_chars" in exp and len(text) > exp["max_chars"]:
            failures.append(f"{len(text)} chars > {exp['max_chars']}")
        if exp.get("snapshot"):
            stored = snapshots / prompt / f"{case['name']}.json"
            if json.loads(stored.read_text()) != result:
                failures.append(f"snapshot {stored} differs")
    return failures
