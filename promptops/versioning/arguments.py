"""Argument changes: the part of a prompt's contract that callers code against.

The classification asks one question: can a request that worked before now fail?
Then the change is ``major`` (a removed or newly required argument, a value the enum
no longer allows, a shorter maxLength, a new or different pattern). Accepting more
than before is ``minor``; anything that only alters what is said is ``patch``.

A changed regular expression is classified ``major`` unless it was removed: whether
one regex accepts a superset of another is undecidable in general for Python's
regex flavour, and guessing "looser" would let a breaking change ship as a minor one.
"""

from __future__ import annotations

from collections.abc import Iterator

from promptops.pipeline import defaults
from promptops.pipeline.bundle_types import Argument as Arg
from promptops.versioning.changes import Change, Kind
from promptops.versioning.semver import Level


def diff_arguments(prompt: str, old: list[Arg], new: list[Arg]) -> Iterator[Change]:
    if old is new:  # one compiled prompt at both ends (pipeline/compiled.py): 5,000 a review
        yield from _unequal_to_itself(prompt, old)
        return
    a = {x["name"]: x for x in old}
    b = {x["name"]: x for x in new}
    for name in sorted(a.keys() - b.keys()):
        yield Change(Kind.argument_removed, Level.major, f"argument {name!r} removed",
                     prompt=prompt, argument=name)
    for name in sorted(b.keys() - a.keys()):
        required = bool(b[name].get("required"))
        yield Change(
            Kind.argument_added,
            Level.major if required else Level.minor,
            f"{'required' if required else 'optional'} argument {name!r} added",
            prompt=prompt, argument=name, new={"required": required},
        )
    for name in sorted(a.keys() & b.keys()):
        yield from _argument(prompt, name, a[name], b[name])
    common_a = [n for n in a if n in b]
    common_b = [n for n in b if n in a]
    if common_a != common_b:
        yield Change(Kind.arguments_reordered, Level.patch, "arguments reordered",
                     prompt=prompt, old=common_a, new=common_b)


def _unequal_to_itself(prompt: str, args: list[Arg]) -> Iterator[Change]:
    """What :func:`diff_arguments` finds between ``args`` and the very same list: only an
    argument holding a value unequal to itself (a NaN default) can compare as changed,
    each such one checked as before; no other argument is compared field by field."""
    by_name = {x["name"]: x for x in args}
    for name in sorted(by_name):
        x = by_name[name]
        if any(v != v for v in x.values()):
            yield from _argument(prompt, name, x, x)


def _argument(prompt: str, name: str, a: Arg, b: Arg) -> Iterator[Change]:
    def change(kind: Kind, level: Level, what: str, old: object = None,
               new: object = None) -> Change:
        return Change(kind, level, f"argument {name!r} {what}", prompt=prompt, argument=name,
                      old=old, new=new)

    req_a, req_b = bool(a.get("required")), bool(b.get("required"))
    if req_b and not req_a:
        yield change(Kind.argument_made_required, Level.major, "made required", False, True)
    elif req_a and not req_b:
        yield change(Kind.argument_made_optional, Level.minor, "made optional", True, False)
    enum = _enum(a.get("enum"), b.get("enum"))
    if enum is not None:
        kind, level, what = enum
        yield change(kind, level, what, a.get("enum"), b.get("enum"))
    pat_a, pat_b = a.get("pattern"), b.get("pattern")
    if pat_a != pat_b:
        if pat_b is None:
            yield change(Kind.pattern_changed, Level.minor, "pattern removed", pat_a, pat_b)
        else:
            what = "pattern added" if pat_a is None else "pattern changed"
            yield change(Kind.pattern_changed, Level.major, what, pat_a, pat_b)
    len_a = a.get("maxLength", defaults.MAX_LENGTH)
    len_b = b.get("maxLength", defaults.MAX_LENGTH)
    if len_a != len_b:
        tighter = len_b < len_a
        yield change(
            Kind.max_length_changed,
            Level.major if tighter else Level.minor,
            f"maxLength {'lowered' if tighter else 'raised'} {len_a} -> {len_b}",
            len_a, len_b,
        )
    type_a, type_b = a.get("type", "string"), b.get("type", "string")
    if type_a != type_b:
        # integer -> number accepts every value it did; any other change can refuse one, or
        # hand templates a different kind of value (text where they read a list)
        wider = (type_a, type_b) == ("integer", "number")
        yield change(Kind.argument_type_changed, Level.minor if wider else Level.major,
                     f"type changed {type_a} -> {type_b}", type_a, type_b)
    schema_a, schema_b = a.get("schema"), b.get("schema")
    if schema_a != schema_b:
        # whether one schema accepts a superset of another is not decided here: only
        # dropping the schema is known to refuse nothing new
        dropped = schema_b is None
        yield change(Kind.argument_schema_changed, Level.minor if dropped else Level.major,
                     "schema removed" if dropped else "schema added" if schema_a is None
                     else "schema changed", schema_a, schema_b)
    if a.get("default") != b.get("default"):
        yield change(Kind.default_changed, Level.patch, "default changed",
                     a.get("default"), b.get("default"))
    for key in ("title", "description", "examples"):
        if a.get(key) != b.get(key):
            yield change(Kind.argument_description_changed, Level.patch, f"{key} changed",
                         a.get(key), b.get(key))


def _enum(a: list[str] | None, b: list[str] | None) -> tuple[Kind, Level, str] | None:
    if a == b:
        return None
    if a is None:
        return Kind.enum_narrowed, Level.major, "now restricted to an enum"
    if b is None:
        return Kind.enum_widened, Level.minor, "enum removed (any value accepted)"
    gone, came = sorted(set(a) - set(b)), sorted(set(b) - set(a))
    if gone and came:
        return Kind.enum_changed, Level.major, f"enum changed (removed {gone}, added {came})"
    if gone:
        return Kind.enum_narrowed, Level.major, f"enum narrowed (removed {gone})"
    if came:
        return Kind.enum_widened, Level.minor, f"enum widened (added {came})"
    return Kind.enum_changed, Level.patch, "enum values reordered"
