"""Validate JSON against a definition of the official MCP JSON Schema of a revision.

The schemas are vendored in ``tests/data/mcp-schema`` (provenance in ``tests/data/README.md``);
``MCP_SCHEMA_DIR`` overrides the folder, e.g. to try a newer copy.
"""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

REPO = Path(__file__).resolve().parents[2]
SCHEMA_DIR = Path(os.environ.get("MCP_SCHEMA_DIR", REPO / "tests" / "data" / "mcp-schema"))


@cache
def _schema(revision: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SCHEMA_DIR / revision / "schema.json").read_text())
    return data


@cache
def _validator(revision: str, definition: str) -> Any:
    schema = _schema(revision)
    defs_key = "$defs" if "$defs" in schema else "definitions"
    if definition not in schema[defs_key]:
        raise KeyError(f"{definition} is not defined in the {revision} schema")
    wrapper = {
        "$schema": schema["$schema"],
        defs_key: schema[defs_key],
        "$ref": f"#/{defs_key}/{definition}",
    }
    cls = jsonschema.validators.validator_for(wrapper)
    return cls(wrapper)


def validate(instance: Any, definition: str, revision: str = "2025-11-25") -> None:
    """Raise jsonschema.ValidationError when ``instance`` is not a valid ``definition``."""
    _validator(revision, definition).validate(instance)
