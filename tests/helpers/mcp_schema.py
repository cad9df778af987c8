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
from jsonschema import _keywords

REPO = Path(__file__).resolve().parents[2]
SCHEMA_DIR = Path(os.environ.get("MCP_SCHEMA_DIR", REPO / "tests" / "data" / "mcp-schema"))


@cache
def _schema(revision: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SCHEMA_DIR / revision / "schema.json").read_text())
    return data


# A value judged valid against a definition once is valid against it again: longer keys are
# not kept (a 10 MB argument echoed in an error): ~15,000 entries, ~12 MB, after the
# bundle-load and in-process serve tests (measured).
MEMO_MAX_CHARS = 64 * 1024


def _small(instance: Any) -> bool:
    """Whether ``instance`` holds at most ``MEMO_MAX_CHARS`` characters of strings and items,
    found without walking more than that (a 10 MB value costs no more than a small one)."""
    left, stack = MEMO_MAX_CHARS, [instance]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            left -= len(node)
        elif isinstance(node, dict):
            left -= len(node)
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, (list, tuple)):
            left -= len(node)
            stack.extend(node)
        else:
            left -= 1
        if left < 0:
            return False
    return True


@cache
def _valid_refs(revision: str) -> set[tuple[str, str]]:
    """(``$ref``, ``repr`` of a value) pairs found valid, per revision.

    Every ``$ref`` of a revision's schema is a local pointer into that revision's one
    document (no ``$dynamicRef``, no ``unevaluated*``: checked by
    tests/serve/test_schema_memo.py), so a pointer names one subschema whatever definition
    is validated, and validating the same value against it again can only succeed again.
    ``repr`` tells the types apart where JSON text would not (a tuple, an int key)."""
    return set()


def _memo_ref(revision: str) -> Any:
    """jsonschema's ``$ref`` keyword, skipped for a value this revision's pointer accepted
    before. The suite validates the same prompts, content blocks and arguments in reply
    after reply (the serve tests, the bundle mutations, the fuzz oracle), and jsonschema
    resolves and walks every reference again each time: most of the serve tests' CPU.
    Only successes are kept, so an invalid value is walked in full and gets the same error,
    path and message as without the memo."""
    valid = _valid_refs(revision)

    def ref(validator: Any, ref: str, instance: Any, schema: Any) -> Any:
        key = (ref, repr(instance)) if _small(instance) else None
        if key is not None and key in valid:
            return
        failed = False
        for error in _keywords.ref(validator, ref, instance, schema):
            failed = True
            yield error
        if key is not None and not failed:
            valid.add(key)

    return ref


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
    cls = jsonschema.validators.extend(jsonschema.validators.validator_for(wrapper),
                                       validators={"$ref": _memo_ref(revision)})
    return cls(wrapper)


def validate(instance: Any, definition: str, revision: str = "2025-11-25") -> None:
    """Raise jsonschema.ValidationError when ``instance`` is not a valid ``definition``."""
    _validator(revision, definition).validate(instance)
