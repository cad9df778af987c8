"""A Prompty file's ``inputs`` and ``sample`` as the package's arguments.

Prompty renders the sample's values, never ``default``; an input's type is declared, or
its sample's, or what the template does with it (a loop makes it an array). Each choice
that differs from what the file says is a note. Apart from the body's translation
(:mod:`promptops.interop.importers.prompty`) because the two read different halves of a
file.
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet

from promptops.interop.importers import _common
from promptops.interop.ir import (
    ArgType,
    Argument,
    Json,
    JsonObject,
    MessageItem,
    Splice,
)

_TYPES: dict[str, ArgType] = {"string": "string", "number": "number", "integer": "integer",
                              "boolean": "boolean", "array": "array", "object": "object",
                              "list": "array", "dict": "object", "int": "integer",
                              "float": "number", "bool": "boolean", "str": "string"}
HISTORY_SCHEMA = {"type": "array", "items": {
    "type": "object", "required": ["role", "content"],
    "properties": {"role": {"type": "string"}, "content": {"type": "string"}}}}


def arguments_of(inputs: Json, used: list[str], iterated: set[str], sample: dict[str, Json],
               messages: list[MessageItem], notes: list[str],
               objects: AbstractSet[str] = frozenset()) -> list[Argument]:
    declared = _declared(inputs, notes)
    spliced = {m.argument for m in messages if isinstance(m, Splice)}
    out: list[Argument] = []
    for name in [*declared, *(n for n in used if n not in declared)]:
        spec = declared.get(name, {})
        kind = _kind(name, spec, sample, objects, notes,
                     looped=name in iterated or name in spliced, declared=name in declared)
        desc = spec.get("description") if isinstance(spec.get("description"), str) else None
        schema = dict(HISTORY_SCHEMA) if name in spliced else {}
        schema.pop("type", None)
        extra = {k: v for k, v in spec.items()
                 if k not in ("type", "description", "default", "example", "sample")}
        if extra:
            notes.append(f"inputs.{name}: keys {sorted(extra)} are not Prompty 0.1's; kept in "
                         "the argument's schema")
            schema.update(extra)
        _default_notes(name, spec, sample, notes)
        if name in sample:
            out.append(Argument(name, kind, False, sample[name], desc, schema))
            continue
        out.append(_common.optional_argument(name, kind, notes, desc, schema))
    return out


def _declared(inputs: Json, notes: list[str]) -> dict[str, JsonObject]:
    """The ``inputs`` mapping, each entry a spec (a shorthand value becomes an example)."""
    declared: dict[str, JsonObject] = {}
    if isinstance(inputs, dict):
        for name, spec in inputs.items():
            if isinstance(spec, dict):
                declared[name] = spec
            else:  # shorthand "name: value" (a Prompty 2 habit): the value is an example
                declared[name] = {"type": _common.infer_type(spec), "example": spec}
                notes.append(f"inputs.{name}: shorthand value {spec!r} read as an example of "
                             "its type (Prompty 0.1 does not apply it)")
    return declared


def _kind(name: str, spec: JsonObject, sample: dict[str, Json], objects: AbstractSet[str],
          notes: list[str], *, looped: bool, declared: bool) -> ArgType:
    """An input's type: declared, else its sample's, else what the template does with it."""
    kind: ArgType = _TYPES.get(str(spec.get("type", "string")).lower(), "string")
    if "type" not in spec and name in sample:  # untyped: the sample's type
        kind = _common.infer_type(sample[name])
    elif "type" not in spec and name in objects:  # {{ customer.firstName }}
        kind = "object"
    if name in sample and _common.infer_type(sample[name]) != kind and not (
            kind == "number" and isinstance(sample[name], int)):
        # The sample is what Prompty renders (its value, as it is): the argument takes
        # the sample's type, so its default is one the package format accepts.
        notes.append(f"inputs.{name}: declared {kind}, but its sample is "
                     f"{_common.infer_type(sample[name])}: imported with the sample's type")
        kind = _common.infer_type(sample[name])
    if looped and kind != "array":
        if declared:
            notes.append(f"{name}: declared {spec.get('type')}, but the template loops over "
                         "it: imported as an array")
        kind = "array"
    return kind


def _default_notes(name: str, spec: JsonObject, sample: dict[str, Json],
                   notes: list[str]) -> None:
    """Prompty applies the sample, never ``default``: say so when they differ."""
    if "default" in spec and spec["default"] != sample.get(name, spec["default"]):
        notes.append(f"inputs.{name}.default {spec['default']!r} is not applied by Prompty "
                     f"(its sample is): the imported default is the sample's")
    elif "default" in spec and name not in sample:
        notes.append(f"inputs.{name}.default {spec['default']!r} is not applied by Prompty; "
                     "the imported default is what a missing value renders")
