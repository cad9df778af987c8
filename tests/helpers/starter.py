"""Checks shared by the starter, seed and render tests: the official MCP JSON Schemas.

(The starter's own test files are run by the real runner, `promptops.testing`.)
"""

from __future__ import annotations

import json
from pathlib import Path

from jsonschema import Draft7Validator, Draft202012Validator

DATA = Path(__file__).resolve().parents[1] / "data"


def mcp_validator(definition: str, revision: str = "2025-11-25") -> Draft7Validator:
    """A validator for one definition of the official MCP JSON Schema."""
    schema = json.loads((DATA / "mcp-schema" / revision / "schema.json").read_text())
    defs_key = "$defs" if "$defs" in schema else "definitions"
    ref = {"$ref": f"#/{defs_key}/{definition}", defs_key: schema[defs_key]}
    cls = Draft202012Validator if "2020-12" in schema.get("$schema", "") else Draft7Validator
    return cls(ref)  # type: ignore[no-any-return]
