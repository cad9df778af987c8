"""The bundle format is stated once: the TypedDicts, the JSON Schema and the load check agree.

``promptops.pipeline.bundle_types`` types every reader of a bundle and holds the one table
of the format's rules (``FORMAT_TABLE``: keys, kinds, literals, patterns, bounds), from
which serving's load check (``bundle_check``) is compiled. ``promptops schema bundle`` (the
pydantic model behind ``promptops verify``) documents the format for tools. A key, a
literal, a pattern or a bound changed in one of them and not the others would let a bundle
pass one check and fail another, so each object of the format is held here to the table:
the TypedDicts by keys, required keys and types, the JSON Schema field by field.
"""

from __future__ import annotations

import subprocess
import sys
import types
import typing
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

import pytest

from promptops.commands.schema import schema_for
from promptops.pipeline import bundle_format, bundle_shapes, bundle_types
from promptops.pipeline.build import Build
from promptops.pipeline.bundle_types import FORMAT_TABLE, Field

HERE = Path(__file__).resolve().parent.parent  # tests/

# TypedDict (and table entry) -> its definition in the JSON Schema ("" for the top)
DEFINITIONS = {
    "Bundle": "", "PackageInfo": "BundlePackage", "Prompt": "BundlePrompt",
    "Argument": "Argument", "Message": "BundleMessage", "Icon": "Icon",
    "Annotations": "Annotations", "Resource": "BundleResource", "SourceInfo": "BundleSource",
    "Limits": "LimitsConfig", "ModelInfo": "Model", "ToolInfo": "Tool", "OutputInfo": "Output",
    "SampleInfo": "Sample",
}
# Where the table is stricter than the JSON Schema on purpose, and why (docs/bundle.md):
STRICTER = {
    # the TypedDict cannot say a constant without making every writer spell the literal
    ("Bundle", "format"): "the format's name is a str to its readers",
    # the build always writes it (the model's default {}); serving reads it unguarded
    ("SampleInfo", "arguments"): "required at load, defaulted by the schema",
}
Norm = tuple[Any, ...]


def _definition(name: str) -> dict[str, Any]:
    schema = schema_for("bundle")
    found: dict[str, Any] = schema if not DEFINITIONS[name] else schema["$defs"][
        DEFINITIONS[name]]
    return found


def test_the_table_covers_every_object_of_the_format() -> None:
    typed = {name for name, value in vars(bundle_types).items()
             if isinstance(value, type) and typing.is_typeddict(value)}
    assert set(FORMAT_TABLE) == typed == set(DEFINITIONS)


# ---- the TypedDicts against the table: keys, required keys, types --------------------------
def _kind(hint: Any) -> Norm:
    """(kind, of, values, also) of a TypedDict annotation, in the table's terms."""
    origin, args = get_origin(hint), get_args(hint)
    if origin in (typing.Union, types.UnionType):
        kinds = [_kind(a) for a in args if a is not type(None)]
        also: tuple[object, ...] = (None,) if type(None) in args else ()
        plain = [k for k in kinds if not (k[0] == "boolean" and k[2] == (False,))]
        also += (False,) if len(plain) < len(kinds) else ()
        assert len(plain) == 1, hint
        return (*plain[0][:3], also)
    if origin is Literal:
        return {str: "string", bool: "boolean"}[type(args[0])], None, tuple(args), ()
    if origin is list:
        item = _kind(args[0])
        return "array", item[0], item[2], ()
    if origin is dict:
        value = _kind(args[1])[0]
        return "object", None if value == "json" else value, (), ()
    if typing.is_typeddict(hint):
        return hint.__name__, None, (), ()
    simple = {str: "string", bool: "boolean", int: "integer", float: "number", object: "json",
              Any: "json"}
    return simple[hint], None, (), ()


def _table_kind(field: Field) -> Norm:
    return field.kind, None if field.of == "json" else field.of, field.values, field.also


@pytest.mark.parametrize("name", sorted(FORMAT_TABLE))
def test_the_typeddicts_say_what_the_table_says(name: str) -> None:
    typed: Any = getattr(bundle_types, name)
    table = FORMAT_TABLE[name]
    assert bundle_types.keys(typed) == set(table)
    hints = typing.get_type_hints(typed)
    for key, field in table.items():
        want = _table_kind(field)
        if (name, key) in STRICTER:
            want = (want[0], want[1], (), want[3])
        got = _kind(hints[key])
        assert got[:2] == want[:2] and got[3] == want[3], (name, key, got, want)
        assert got[2] in ((), want[2]), (name, key, got, want)  # a Literal says the values


# ---- the JSON Schema against the table, field by field -------------------------------------
def _schema_kind(prop: dict[str, Any], required: bool) -> Norm:
    """(kind, of, values, also, pattern, min_length, ge, le) of a JSON Schema property."""
    options = prop.get("anyOf", [prop])
    nullable = {"type": "null"} in options
    options = [o for o in options if o != {"type": "null"}]
    also: tuple[object, ...] = (None,) if nullable and required else ()
    if any(o.get("const") is False for o in options):
        also += (False,)
        options = [o for o in options if o.get("const") is not False]
    assert len(options) == 1, prop
    (one,) = options
    if "$ref" in one:
        ref = one["$ref"].rsplit("/", 1)[1]
        kind = "json" if ref == "JsonValue" else next(k for k, v in DEFINITIONS.items()
                                                      if v == ref)
        return kind, None, (), also, None, None, None, None
    kind, of, values = one["type"], None, tuple(one.get("enum", ()))
    if "const" in one:
        values = (one["const"],)
    if kind == "array":
        item = _schema_kind(one["items"], True)
        of, values = item[0], item[2]
    if kind == "object":
        of = _schema_kind(one["additionalProperties"], True)[0]
    return (kind, None if of == "json" else of, values, also, one.get("pattern"),
            one.get("minLength"), one.get("minimum"), one.get("maximum"))


@pytest.mark.parametrize("name", sorted(FORMAT_TABLE))
def test_the_json_schema_says_what_the_table_says(name: str) -> None:
    """Kinds, literals, patterns, lengths and bounds; null only where the table has it (the
    schema lets an optional key be null, the load check wants it absent: stricter)."""
    definition = _definition(name)
    required = set(definition.get("required", []))
    assert set(definition["properties"]) == set(FORMAT_TABLE[name])
    for key, field in FORMAT_TABLE[name].items():
        got = _schema_kind(definition["properties"][key], key in required)
        want = (*_table_kind(field), field.pattern, field.min_length, field.ge, field.le)
        assert got == want, (name, key, got, want)


@pytest.mark.parametrize("name", sorted(FORMAT_TABLE))
def test_the_required_keys_agree(name: str) -> None:
    typed: Any = getattr(bundle_types, name)
    schema_required = set(_definition(name).get("required", []))
    stricter = {key for (obj, key) in STRICTER if obj == name and key in typed.__required_keys__
                and key not in schema_required}
    assert typed.__required_keys__ - stricter == schema_required


def test_the_load_check_is_compiled_from_the_table() -> None:
    for name, table in FORMAT_TABLE.items():
        shape = bundle_shapes.Shape(name)
        assert shape.allowed == set(table)
        assert set(shape.required) == getattr(bundle_types, name).__required_keys__


@pytest.mark.parametrize("name", sorted(FORMAT_TABLE))
def test_the_format_states_each_typeddicts_required_keys_in_its_order(name: str) -> None:
    """bundle_format writes them out (serve's start makes no TypedDict): the same keys, in
    the TypedDict's order (the order the load check says what an object lacks)."""
    typed: Any = getattr(bundle_types, name)
    assert bundle_format.REQUIRED[name] == tuple(
        k for k in typed.__annotations__ if k in typed.__required_keys__)


def test_the_formats_literals_are_the_typeddicts() -> None:
    """Each tuple of literals bundle_format writes out is its Literal alias's values."""
    assert get_args(bundle_types.Role) == bundle_format.ROLES
    assert get_args(bundle_types.ServedRole) == bundle_format.SERVED_ROLES
    assert get_args(bundle_types.Kind) == bundle_format.KINDS
    assert get_args(bundle_types.ArgType) == bundle_format.ARG_TYPES
    modes = get_args(typing.get_type_hints(bundle_types.Prompt)["whitespace"])
    assert modes == bundle_format.WHITESPACE_MODES
    package = get_args(typing.get_type_hints(bundle_types.PackageInfo)["whitespace"])
    assert package == bundle_format.WHITESPACE_MODES


def test_serves_start_makes_no_typeddict() -> None:
    """The load check imports the table alone: not the TypedDicts, whose creation was ~8 M
    instructions of every cold start)."""
    code = ("import sys; import promptops.pipeline.bundle_check, promptops.pipeline.bundle; "
            "print('promptops.pipeline.bundle_types' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "False"


def test_the_format_name_is_the_same_everywhere() -> None:
    schema = schema_for("bundle")
    assert schema["properties"]["format"]["const"] == bundle_types.FORMAT == "promptops.bundle/1"
    assert FORMAT_TABLE["Bundle"]["format"].values == (bundle_types.FORMAT,)


def test_a_change_to_the_table_alone_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The field-by-field test can fail: a literal dropped from the table disagrees."""
    package = dict(FORMAT_TABLE["PackageInfo"])
    package["cacheScope"] = Field("string", values=("public",))
    monkeypatch.setitem(FORMAT_TABLE, "PackageInfo", package)
    with pytest.raises(AssertionError):
        test_the_json_schema_says_what_the_table_says("PackageInfo")


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
