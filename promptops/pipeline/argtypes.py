"""Typed arguments: what a value on the MCP wire (always a string) means for its type.

Real prompts take objects, lists and numbers (a ``customer`` with ``orders``, a ``history``
of messages, a ``count``); a template that reads ``customer.id`` from a string fails only at
render time with ``'str object' has no attribute 'id'``. So a typed argument's value is parsed
and checked *before* any template runs, and a bad value is the caller's error naming the
argument and the type it expects.

Parsing (``parse``): ``string`` is the value itself; ``number``/``integer`` are JSON numbers
(``3``, ``-2.5``, ``1e3``; an integer must have no fraction); ``boolean`` is ``true`` or
``false`` (as JSON writes them); ``array``/``object`` are JSON text. A value that is already
of the type (a test case or ``--sample`` holding YAML data) is taken as it is.

Checking (``check``) enforces the type and the JSON Schema keywords of :data:`KEYWORDS`
(a schema using any other is refused when the package loads), nothing else, so a schema
never promises more than is checked. It is bounded: nesting deeper than :data:`MAX_DEPTH`
is refused.
Standard library only: serving imports this on its cold path.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, NoReturn

MAX_DEPTH = 64
KEYWORDS = frozenset({
    "type", "items", "properties", "required", "additionalProperties", "enum", "minItems",
    "maxItems", "minLength", "maxLength", "minimum", "maximum", "description", "title",
    "examples", "default"})
_PY: dict[str, tuple[type, ...]] = {
    "string": (str,), "number": (int, float), "integer": (int,), "boolean": (bool,),
    "array": (list,), "object": (dict,), "null": (type(None),)}


# (keyword, the values it bounds, whether it is a lower bound, how a violation reads)
_BOUNDS: tuple[tuple[str, type | tuple[type, ...], bool, str], ...] = (
    ("minLength", str, True, "shorter than minLength"),
    ("maxLength", str, False, "longer than maxLength"),
    ("minimum", (int, float), True, "below the minimum"),
    ("maximum", (int, float), False, "above the maximum"),
    ("minItems", list, True, "fewer items than minItems"),
    ("maxItems", list, False, "more items than maxItems"),
)


class ArgumentTypeError(ValueError):
    """A value that does not parse as, or fit, its argument's type."""


def unknown_keywords(schema: Mapping[str, object], depth: int = 0) -> list[str]:
    """The keywords of ``schema`` (recursively) that :func:`check` does not enforce."""
    if depth > MAX_DEPTH:
        return ["(nested too deeply)"]
    bad = [k for k in schema if k not in KEYWORDS]
    items = schema.get("items")
    if isinstance(items, Mapping):
        bad += unknown_keywords(items, depth + 1)
    props = schema.get("properties")
    if isinstance(props, Mapping):
        for sub in props.values():
            if isinstance(sub, Mapping):
                bad += unknown_keywords(sub, depth + 1)
    extra = schema.get("additionalProperties")
    if isinstance(extra, Mapping):
        bad += unknown_keywords(extra, depth + 1)
    return bad


def parse(spec: Mapping[str, Any], value: object) -> object:
    """The value of a typed argument from what the caller sent; ArgumentTypeError if bad."""
    kind = spec.get("type", "string")
    name = spec["name"]
    if kind == "string" or not isinstance(value, str):
        parsed: object = value
    elif kind == "boolean":
        if value not in ("true", "false"):
            raise ArgumentTypeError(f"argument {name!r} expects a boolean (true or false); "
                                    f"got {_show(value)}")
        parsed = value == "true"
    else:
        try:
            parsed = json.loads(value, parse_constant=_no_constant)
        except (ValueError, RecursionError):
            raise ArgumentTypeError(
                f"argument {name!r} expects {_article(kind)} as JSON; got {_show(value)}"
            ) from None
        if kind == "integer" and isinstance(parsed, float) and parsed.is_integer() \
                and "." not in value and "e" not in value.lower():
            parsed = int(parsed)
    problem = check(spec, parsed)
    if problem:
        raise ArgumentTypeError(f"argument {name!r}: {problem}")
    return parsed


def check(spec: Mapping[str, Any], value: object) -> str | None:
    """What is wrong with ``value`` for the argument ``spec`` (type + schema), or None."""
    schema = dict(spec.get("schema") or {})
    schema["type"] = spec.get("type", "string")
    return _check(schema, value, "", 0)


def _check(schema: Mapping[str, object], value: object, where: str, depth: int) -> str | None:
    if depth > MAX_DEPTH:
        return f"{where or 'value'} is nested too deeply"
    at = f"{where}: " if where else ""
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind] if kind else []
    if kinds and not any(_is(k, value) for k in kinds):
        return f"{at}expected {' or '.join(map(str, kinds))}, got {_json_type(value)}"
    enum = schema.get("enum")
    if isinstance(enum, list) and not any(_same(value, e) for e in enum):
        return f"{at}must be one of {', '.join(json.dumps(e) for e in enum)}"
    problem = _bounds(schema, value, at)
    if problem is None and isinstance(value, list):
        problem = _items(schema, value, where, depth)
    if problem is None and isinstance(value, dict):
        problem = _properties(schema, value, where, depth)
    return problem


def _bounds(schema: Mapping[str, Any], value: object, at: str) -> str | None:
    """minimum/maximum, minLength/maxLength, minItems/maxItems."""
    for key, bounded, low, words in _BOUNDS:
        if key in schema and isinstance(value, bounded) and not isinstance(value, bool):
            size = value if isinstance(value, int | float) else len(value) \
                if isinstance(value, str | list) else 0
            if size < schema[key] if low else size > schema[key]:
                return f"{at}{words} {schema[key]}"
    return None


def _items(schema: Mapping[str, object], value: list[object], where: str,
           depth: int) -> str | None:
    items = schema.get("items")
    if isinstance(items, Mapping):
        for i, item in enumerate(value):
            problem = _check(items, item, f"{where}[{i}]", depth + 1)
            if problem:
                return problem
    return None


def _properties(schema: Mapping[str, Any], value: dict[object, object], where: str,
                depth: int) -> str | None:
    at = f"{where}: " if where else ""
    for key in schema.get("required", ()):
        if key not in value:
            return f"{at}missing property {key!r}"
    props = schema.get("properties") or {}
    extra = schema.get("additionalProperties", True)
    for key, item in value.items():
        sub = props.get(key)
        if sub is None and extra is False:
            return f"{at}unexpected property {key!r}"
        if sub is None and isinstance(extra, Mapping):
            sub = extra
        if isinstance(sub, Mapping):
            problem = _check(sub, item, f"{where}.{key}" if where else str(key), depth + 1)
            if problem:
                return problem
    return None


def _is(kind: object, value: object) -> bool:
    py = _PY.get(str(kind))
    if py is None:
        return False
    if kind in ("number", "integer") and isinstance(value, bool):
        return False
    if kind == "integer" and isinstance(value, float):
        return value.is_integer()
    if kind == "number" and isinstance(value, float):
        import math  # a float argument only: serve's start (the bundle check) never needs it

        return math.isfinite(value)
    return isinstance(value, py)


def _same(a: object, b: object) -> bool:
    return (type(a) is type(b) and a == b) or (
        _is("number", a) and _is("number", b) and a == b)


def _json_type(value: object) -> str:
    for name in ("boolean", "integer", "number", "string", "array", "object", "null"):
        if _is(name, value):
            return name
    return type(value).__name__


def _no_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not JSON")


def _article(kind: str) -> str:
    return ("an " if kind[0] in "aeiou" else "a ") + kind


def _show(value: str) -> str:
    return repr(value if len(value) <= 40 else value[:37] + "...")
