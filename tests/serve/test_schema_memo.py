"""The MCP schema judge's memo (tests/helpers/mcp_schema.py) answers as jsonschema does.

It skips a ``$ref`` for a value that pointer accepted before; that is sound only while every
reference of the vendored schemas is a plain local pointer (one subschema whatever is being
validated) and nothing depends on which keywords were evaluated. A new schema revision that
breaks this fails here, and the memo must then go, not the check.
"""

from __future__ import annotations

import copy
from typing import Any

import jsonschema
import pytest
from helpers.mcp_schema import SCHEMA_DIR, _schema, validate

REVISIONS = sorted(p.name for p in SCHEMA_DIR.iterdir() if (p / "schema.json").is_file())


def _walk(node: Any) -> Any:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


@pytest.mark.parametrize("revision", REVISIONS)
def test_every_reference_is_a_local_pointer(revision: str) -> None:
    schema = _schema(revision)
    defs_key = "$defs" if "$defs" in schema else "definitions"
    refs = [node["$ref"] for node in _walk(schema) if "$ref" in node]
    assert refs and all(ref.startswith(f"#/{defs_key}/") for ref in refs), revision
    assert all(ref.split("/", 2)[2] in schema[defs_key] for ref in refs), revision
    keys = {key for node in _walk(schema) for key in node}
    assert not keys & {"$dynamicRef", "$recursiveRef", "unevaluatedProperties",
                       "unevaluatedItems", "$anchor", "$dynamicAnchor", "$id"}, revision


def _plain(definition: str, revision: str) -> Any:
    schema = _schema(revision)
    defs_key = "$defs" if "$defs" in schema else "definitions"
    wrapper = {"$schema": schema["$schema"], defs_key: schema[defs_key],
               "$ref": f"#/{defs_key}/{definition}"}
    return jsonschema.validators.validator_for(wrapper)(wrapper)


def _verdict(validator: Any, value: Any) -> tuple[str, ...] | None:
    try:
        validator(value)
    except jsonschema.ValidationError as exc:
        return exc.message, str(list(exc.absolute_path)), str(list(exc.absolute_schema_path))
    return None


PROMPT = {"name": "greet", "description": "Greets",
          "arguments": [{"name": "name", "required": True}, {"name": "tone"}]}
GET = {"description": "Greets", "messages": [
    {"role": "user", "content": {"type": "text", "text": "Hello"}},
    {"role": "assistant", "content": {"type": "text", "text": "Hi"}}]}


def _broken(value: dict[str, Any], where: list[Any], bad: Any) -> dict[str, Any]:
    out = copy.deepcopy(value)
    node: Any = out
    for step in where[:-1]:
        node = node[step]
    node[where[-1]] = bad
    return out


@pytest.mark.parametrize("revision", REVISIONS)
def test_a_value_valid_once_and_then_broken_gets_jsonschemas_own_error(revision: str) -> None:
    """Valid values twice (the second from the memo), then the same values broken one field
    at a time inside an already accepted subtree: every verdict, message and path is the
    plain validator's."""
    cases: list[tuple[str, Any]] = [("ListPromptsResult", {"prompts": [PROMPT, PROMPT]}),
                                    ("GetPromptResult", GET)]
    for bad in (None, 1, "x", [], {}, True):
        cases += [("ListPromptsResult", _broken({"prompts": [PROMPT, PROMPT]},
                                                ["prompts", 1, "arguments", 0, "name"], bad)),
                  ("GetPromptResult", _broken(GET, ["messages", 1, "content", "type"], bad)),
                  ("GetPromptResult", _broken(GET, ["messages", 0, "role"], bad)),
                  ("GetPromptResult", _broken(GET, ["messages", 0, "content"], (bad,)))]
    cases += [("ListPromptsResult", {"prompts": [PROMPT, PROMPT]}), ("GetPromptResult", GET),
              # the same text as JSON, not the same value: a tuple is no JSON array
              ("GetPromptResult", {**GET, "messages": tuple(GET["messages"])})]
    failures = 0
    for definition, value in cases:
        want = _verdict(_plain(definition, revision).validate, value)
        got = _verdict(lambda v, d=definition: validate(v, d, revision), value)
        assert got == want, (definition, value)
        failures += want is not None
    assert failures >= 13  # the broken values are judged, not waved through
