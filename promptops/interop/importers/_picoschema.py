"""Dotprompt's schema shorthand (Picoschema) to JSON Schema, as dotprompt 1.x expands it.

``name: string, the description``, ``name?: string`` (optional, and then also nullable),
``items(array, desc): {...}``, ``obj(object): {...}``, ``color(enum): [a, b]``, ``(*): type``
for additional properties, the scalar types ``string number integer boolean null any``, and
a bare name for a schema registered in code (kept as that name: it is not in the file).
A value that already looks like JSON Schema (a ``type`` or ``properties`` key) is kept.
"""

from __future__ import annotations

from promptops.interop.ir import Json, JsonObject

SCALARS = ("any", "boolean", "integer", "null", "number", "string")


class NamedSchema(str):
    """A schema referenced by name (``schema: Analysis``), defined in code, not in the file."""


def plain(value: Json) -> Json:
    """``value`` with every NamedSchema a plain ``str`` (the name), for what leaves the
    importer: YAML writers and JSON encoders know ``str``, not its subclasses."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, NamedSchema):
        return str(value)
    return value


def _array_shorthand(kind: str, desc: str | None) -> JsonObject | None:
    """``string[]`` (TypeScript's spelling, common in real files): an array of that scalar."""
    if kind.endswith("[]") and kind[:-2].strip() in SCALARS:
        out: JsonObject = {"type": "array", "items": _scalar(kind[:-2].strip(), None)}
        if desc:
            out["description"] = desc
        return out
    return None


def expand(schema: Json) -> Json:
    """JSON Schema for a Picoschema value (``None`` for none, a NamedSchema for a name)."""
    if not schema:
        return None
    if isinstance(schema, str):
        kind, desc = _description(schema)
        if kind in SCALARS:
            return _scalar(kind, desc)
        return _array_shorthand(kind, desc) or NamedSchema(kind)
    if isinstance(schema, dict) and schema.get("type") in (*SCALARS, "object", "array"):
        return schema
    if isinstance(schema, dict) and isinstance(schema.get("properties"), dict):
        return {**schema, "type": "object"}
    return _object(schema)


def _scalar(kind: str, desc: str | None) -> JsonObject:
    out: JsonObject = {} if kind == "any" else {"type": kind}
    if desc:
        out["description"] = desc
    return out


def _description(text: str) -> tuple[str, str | None]:
    if "," not in text:
        return text, None
    kind, _, desc = text.partition(",")
    return kind, desc.lstrip(" ")


def _value(value: Json) -> Json:
    if isinstance(value, str):
        kind, desc = _description(value)
        if kind not in SCALARS:
            return _array_shorthand(kind, desc) or NamedSchema(kind)
        return _scalar(kind, desc)
    if isinstance(value, dict) and (isinstance(value.get("type"), str | list)
                                    or isinstance(value.get("properties"), dict)):
        return value  # a JSON Schema written inside the Picoschema (``type: [string, "null"]``)
    if not isinstance(value, dict):
        raise ValueError(f"Picoschema: only objects and strings, got {value!r}")
    return _object(value)


def _object(fields: Json) -> JsonObject:
    if not isinstance(fields, dict):
        raise ValueError(f"Picoschema: only objects and strings, got {fields!r}")
    out: JsonObject = {"type": "object", "properties": {}, "required": [],
                           "additionalProperties": False}
    for key, value in fields.items():
        if key == "(*)":
            out["additionalProperties"] = _value(value)
            continue
        name, _, info = key.partition("(")
        optional = name.endswith("?")
        prop_name = name[:-1] if optional else name
        if not optional:
            out["required"].append(prop_name)
        if not info:
            prop = _value(value)
            if isinstance(prop, dict):
                prop = dict(prop)
                if optional and isinstance(prop.get("type"), str):
                    prop["type"] = [prop["type"], "null"]
            out["properties"][prop_name] = prop
            continue
        kind, desc = _description(info[:-1] if info.endswith(")") else info)
        if kind == "array":
            prop = {"type": ["array", "null"] if optional else "array", "items": _value(value)}
        elif kind == "object":
            prop = dict(_value(value))
            if optional:
                prop["type"] = [prop.get("type"), "null"]
        elif kind == "enum":
            values = list(value) if isinstance(value, list) else [value]
            if optional and None not in values:
                values.append(None)
            prop = {"enum": values}
        else:
            raise ValueError(f"Picoschema: parenthetical types must be object or array, "
                             f"got {kind!r}")
        if desc:
            prop["description"] = desc
        out["properties"][prop_name] = prop
    if not out["required"]:
        del out["required"]
    return out
