"""The bundle format is stated once: the TypedDicts, the JSON Schema and the load check agree.

``promptops.pipeline.bundle_types`` types every reader of a bundle; ``promptops schema
bundle`` (the pydantic model behind ``promptops verify``) documents the format for tools;
serving checks a bundle at load with the standard library (``bundle_check``). A key added
to one and not the others would let a bundle pass one check and fail another, so each
object of the format lists the same keys, required and optional, in all three.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from promptops.commands.schema import schema_for
from promptops.pipeline import bundle_check, bundle_types
from promptops.pipeline.build import Build

HERE = Path(__file__).resolve().parent.parent  # tests/

# TypedDict -> (its definition in the JSON Schema, the key set bundle_check holds it to)
OBJECTS: list[tuple[type, str, frozenset[str]]] = [
    (bundle_types.Bundle, "", bundle_check.TOP_KEYS),
    (bundle_types.PackageInfo, "BundlePackage", bundle_check.PACKAGE_KEYS),
    (bundle_types.Prompt, "BundlePrompt", bundle_check.PROMPT_KEYS),
    (bundle_types.Argument, "Argument", bundle_check.ARGUMENT_KEYS),
    (bundle_types.Message, "BundleMessage", bundle_check.MESSAGE_KEYS),
    (bundle_types.Icon, "Icon", bundle_check.ICON_KEYS),
    (bundle_types.Annotations, "Annotations", bundle_check.ANNOTATION_KEYS),
    (bundle_types.Resource, "BundleResource", bundle_check.RESOURCE_KEYS),
    (bundle_types.SourceInfo, "BundleSource", bundle_check.SOURCE_KEYS),
    (bundle_types.Limits, "LimitsConfig", frozenset({"renderTimeoutMs", "maxOutputChars"})),
]


def _definition(schema: dict[str, Any], name: str) -> dict[str, Any]:
    found: dict[str, Any] = schema if not name else schema["$defs"][name]
    return found


@pytest.mark.parametrize(("typed", "name", "checked"), OBJECTS,
                         ids=[t.__name__ for t, _, _ in OBJECTS])
def test_types_schema_and_load_check_list_the_same_keys(
        typed: type, name: str, checked: frozenset[str]) -> None:
    definition = _definition(schema_for("bundle"), name)
    assert bundle_types.keys(typed) == set(definition["properties"]) == checked
    required: frozenset[str] = typed.__required_keys__  # type: ignore[attr-defined]
    assert required == set(definition.get("required", []))


def test_the_format_name_is_the_same_everywhere() -> None:
    schema = schema_for("bundle")
    assert schema["properties"]["format"]["const"] == bundle_types.FORMAT == "promptops.bundle/1"
    assert bundle_check.FORMAT == bundle_types.FORMAT


def _keys_within(value: object, typed: type, where: str) -> list[str]:
    """Keys of a built bundle's object that its TypedDict does not declare."""
    assert isinstance(value, dict), where
    return [f"{where}.{k}" for k in value if k not in bundle_types.keys(typed)]


def test_a_built_bundle_holds_only_declared_keys() -> None:
    bundle = Build(HERE / "review" / "fixtures" / "starter").bundle
    bad = _keys_within(bundle, bundle_types.Bundle, "bundle")
    bad += _keys_within(bundle["package"], bundle_types.PackageInfo, "package")
    bad += _keys_within(bundle["source"], bundle_types.SourceInfo, "source")
    for res in bundle["resources"].values():
        bad += _keys_within(res, bundle_types.Resource, "resource")
    for p in bundle["prompts"]:
        bad += _keys_within(p, bundle_types.Prompt, p["name"])
        for a in p["arguments"]:
            bad += _keys_within(a, bundle_types.Argument, f"{p['name']}.arguments")
        for m in p["messages"]:
            bad += _keys_within(m, bundle_types.Message, f"{p['name']}.messages")
            if "annotations" in m:
                bad += _keys_within(m["annotations"], bundle_types.Annotations, "annotations")
        for i in p.get("icons", []):
            bad += _keys_within(i, bundle_types.Icon, "icons")
    assert bad == []
    assert any("annotations" in m for p in bundle["prompts"] for m in p["messages"])
