"""The bundle format's table, compiled once for the load check: a :class:`Shape` per object.

:data:`~promptops.pipeline.bundle_format.FORMAT_TABLE` states every key of every object of
a bundle with its kind, literals, pattern and bounds. Serving checks each bundle it loads
against it (:mod:`~.bundle_check`), at start, over every prompt: so the table is compiled
here, at import, into what is quick to run. A plain key becomes its type (one dict lookup
and an identity test per key), a literal a set's ``__contains__``, a pattern a compiled
``fullmatch``, a bound a C-level comparison; only nested objects, arrays, numbers and
nullable keys cost a Python call. Each key also gets the words that name its failure
("is not a string", "is not 'user' or 'assistant'"), derived from the same entry, so the
worded pass and the yes/no pass cannot disagree about a rule of the table.
"""

from __future__ import annotations

import functools
import operator
import re
from collections.abc import Callable
from typing import Any

from promptops.pipeline.bundle_format import ARG_NAME_RE, FORMAT_TABLE, REQUIRED, Field

# Objects whose items the check's passes walk themselves (their rules need the bundle around
# them): the compiled predicate of a key holding them checks the container only.
WALKED = frozenset({"Prompt", "Argument", "Message", "Resource", "PackageInfo", "SourceInfo"})
# Keys checked as one value, worded as one problem (their content is the author's JSON,
# or bounds whose caps the words name).
CARRIED = ("model", "tools", "output", "samples", "metadata")
WORDS = {
    ("PackageInfo", "limits"): "is not renderTimeoutMs and/or maxOutputChars within their "
                               "caps (promptops/sandbox/limits.py)",
    ("Argument", "name"): "is not a valid argument name (1 to 128 characters, no control "
                          "characters)",
    **{("Prompt", key): "is not " + ("a list" if FORMAT_TABLE["Prompt"][key].kind == "array"
                                     else "an object") + " of the documented shape"
       for key in CARRIED},
}
Pred = Callable[[Any], object]  # truthy when the value is right (a pattern's match, say)
_TYPES: dict[str, type] = {"string": str, "boolean": bool, "integer": int, "array": list,
                           "object": dict, **{name: dict for name in WALKED}}


# ---- the table, compiled -------------------------------------------------------------------
class Shape:
    """One object of the format, compiled from its table entry for the two passes."""

    __slots__ = ("allowed", "checked", "fields", "literals", "must", "name", "preds", "required",
                 "tests", "types", "words")

    def __init__(self, name: str) -> None:
        table = FORMAT_TABLE[name]
        self.name = name
        self.fields: dict[str, Field] = table
        self.allowed = frozenset(table)
        self.required = REQUIRED[name]  # "lacks" in the TypedDict's order
        # A scalar key is its type, then (for the fast pass, without a call) its literals
        # or a test of its pattern or bounds; any other (a nested object, an array, a
        # number, a nullable key) is one predicate.
        self.types: dict[str, type] = {}
        self.preds: dict[str, Pred] = {}
        self.literals: dict[str, frozenset[object]] = {}
        self.tests: dict[str, Pred] = {}
        for key, field in table.items():
            scalar = _TYPES.get(field.kind) if _scalar(field) else None
            if scalar is None:
                self.preds[key] = _pred(field)
                continue
            self.types[key] = scalar
            if field.values:
                self.literals[key] = frozenset(field.values)
            elif not _plain(field):
                self.tests[key] = _test(field)
        # The literals and tests as one tuple the fast pass runs through, each a C-level
        # callable where it can be (a set's __contains__, a pattern's fullmatch), with
        # whether the key is required: the set test (must) covers the other required keys.
        checks: list[tuple[str, Pred]] = [(k, v.__contains__) for k, v in self.literals.items()]
        checks += self.tests.items()
        self.checked = tuple((key, test, key in self.required) for key, test in checks)
        self.must = frozenset(self.required) - {key for key, _ in checks}
        self.words = {key: WORDS.get((name, key)) or _words(field) for key, field in table.items()}

    def ok(self, key: str, value: object) -> bool:
        """``value`` is right for ``key`` (a key of this object)."""
        if key in self.preds:
            return bool(self.preds[key](value))
        if type(value) is not self.types[key]:
            return False
        if key in self.literals:
            return value in self.literals[key]
        return key not in self.tests or bool(self.tests[key](value))


def _scalar(field: Field) -> bool:
    """A key the fast pass checks by its type alone, then by its literals or test: a
    string, true/false or an integer, or a container whose items the passes walk."""
    if field.kind in WALKED or field.of in WALKED:
        return True
    return field.kind in ("string", "boolean", "integer") and not field.also


def _plain(field: Field) -> bool:
    return (field.of in (None, "json") and not field.values and not field.also
            and field.pattern is None and field.min_length is None and field.ge is None
            and field.le is None)


def _any(value: object) -> bool:
    return True


def _pred(field: Field) -> Pred:
    """The yes/no test of one table field that is not a scalar (``_scalar``): a nested
    object, an array, a map, a number, a nullable key."""
    kind, of = field.kind, field.of
    if kind == "json":
        return _any
    if kind in FORMAT_TABLE:  # a nested object
        nested = Shape(kind)  # built once per key that holds one: no cache to keep
        return lambda v: fits(v, nested)
    if kind == "array":
        item = _pred(Field(of or "json", values=field.values))
        if of == "string" and not field.values:
            return lambda v: type(v) is list and (not v or set(map(type, v)) == _STRS)
        return lambda v: type(v) is list and all(map(item, v))
    if kind == "object" and of not in (None, "json"):
        if of == "string":
            return lambda v: type(v) is dict and (not v or set(map(type, v.values())) == _STRS)
        value = _pred(Field(of))
        return lambda v: type(v) is dict and all(map(value, v.values()))
    if kind == "number":
        base: Pred = lambda v: type(v) is int or type(v) is float  # noqa: E731 (bool is not)
    else:
        want = _TYPES[kind]
        base = lambda v: type(v) is want  # noqa: E731
    if field.values:
        base = _and(base, frozenset(field.values).__contains__)
    if not _plain(field) and not field.values:
        base = _and(base, _test(field))
    if field.also:
        also, inner = field.also, base
        return lambda v: any(v is x for x in also) or inner(v)
    return base


def _test(field: Field) -> Pred:
    """The pattern or bounds of a value already of the field's kind."""
    if field.pattern is not None:
        if field.pattern == ARG_NAME_RE:
            return _arg_name
        return re.compile(field.pattern).fullmatch  # anchored; fullmatch keeps `$` from
        # taking a final newline, as RE2 and pydantic read it
    if field.min_length is not None:
        shortest = field.min_length
        return lambda v: len(v) >= shortest
    low, high = field.ge, field.le
    if high is None and low is not None:
        return functools.partial(operator.le, low)  # low <= v without a Python frame
    return lambda v: (low is None or v >= low) and (high is None or v <= high)


_ARG_NAME = re.compile(ARG_NAME_RE).fullmatch


def _arg_name(name: str) -> bool:
    """``ARG_NAME_RE`` (1-128 characters, no C0 control or DEL), at twice the speed: printable
    ASCII (the usual name) has neither, which two C-speed tests say; anything else asks
    the pattern itself. A test holds the two to one answer (tests/serve/test_bundle_check_plain.py).
    """
    return (0 < len(name) <= 128 and name.isascii() and name.isprintable()) or bool(
        _ARG_NAME(name))


def _and(first: Pred, then: Pred) -> Pred:
    return lambda v: first(v) and then(v)


def _quoted(values: tuple[object, ...], last: str = " or ") -> str:
    quoted = [repr(v) for v in values]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + last + quoted[-1]


def _words(field: Field) -> str:
    """How the worded pass names a failure of ``field`` ("... is not <this>")."""
    kind, of, values = field.kind, field.of, field.values
    if kind == "json":
        return "is not JSON"  # never said: whatever parsed is JSON
    if kind == "array":
        if values:
            return "is not a list of " + "/".join(repr(v) for v in values)
        return "is not a list of strings" if of == "string" else "is not a list"
    if kind == "object" and of == "string":
        return "is not an object of strings"
    if kind == "object" or kind in FORMAT_TABLE:
        return "is not an object"
    if values:
        if len(values) > 3:
            return "is not one of " + ", ".join(map(str, values))
        return "is not " + _quoted(values)
    if kind == "string" and field.pattern is not None:
        return f"does not match {field.pattern}"
    if kind == "number" and field.ge is not None and field.le is not None:
        return f"is not a number from {field.ge:g} to {field.le:g}"
    if kind == "integer" and field.ge is not None:
        return f"is not an integer of at least {field.ge:g}"
    plain = {"string": "a string", "boolean": "true or false", "integer": "an integer",
             "number": "a number"}[kind]
    also = {None: "null", False: "false"}
    return f"is not {plain}" + "".join(f" or {also[v]}" for v in field.also if v in (None, False))


def words_of(kind: str) -> str:
    """The words of a plain key of ``kind`` ("is not a string")."""
    return _words(Field(kind))


_STRS = {str}


def fits(obj: object, shape: Shape) -> bool:
    """``obj`` is an object of ``shape``: known keys, each right, every required one."""
    if type(obj) is not dict:
        return False
    types, preds = shape.types, shape.preds
    for key, value in obj.items():
        if types.get(key) is not type(value):
            pred = preds.get(key)
            if pred is None or (pred is not _any and not pred(value)):
                return False
    if shape.must and not obj.keys() >= shape.must:
        return False
    # each key is of the right type by now (a literal: hashable)
    for key, test, needed in shape.checked:
        if key in obj:
            if not test(obj[key]):
                return False
        elif needed:
            return False
    return True


BUNDLE, PACKAGE, SOURCE, RESOURCE, PROMPT, ARGUMENT, MESSAGE, ICON, ANNOTATIONS = (
    Shape(name) for name in ("Bundle", "PackageInfo", "SourceInfo", "Resource", "Prompt",
                                 "Argument", "Message", "Icon", "Annotations"))
