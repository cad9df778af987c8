"""How a schema violation reads to a person: the key, the rule, and how to fix it.

pydantic's messages name the validator ("Input should be a valid string"); a prompt
author needs the key, the position, and the fix ("quote it", "did you mean ...?").
"""

from __future__ import annotations

import difflib
from typing import Any

from promptops.pipeline.model import ARG_NAME_RE, NAME_RE, PROMPT_NAME_RE, SEMVER_RE
from promptops.pipeline.yamlio.loader import LoadedFile, Loc


def schema_problem(model: Any, file: LoadedFile, err: Any) -> tuple[tuple[int, int], str]:
    """Where a pydantic error points in the file, and how it reads to a person."""
    loc: Loc = tuple(err["loc"])
    kind = err["type"]
    where = ".".join(str(x) for x in loc) or "document"
    if kind == "extra_forbidden":
        known = _known_keys(model, loc[:-1])
        close = difflib.get_close_matches(str(loc[-1]), known, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else f"; allowed: {', '.join(known)}"
        msg = f"unknown key {loc[-1]!r}{hint}"
        pos = file.position(loc, key=True)
    elif kind == "missing":
        msg = f"missing required key {where!r}"
        pos = file.position(loc)
    else:
        msg = f"{where}: {err['msg'].removeprefix('Value error, ')}"
        if kind == "string_type" and isinstance(err.get("input"), dict | list):
            msg += '; a value starting with "{{" must be quoted: text: "{{ x }}"'
        elif kind == "string_type" and isinstance(err.get("input"), int | float | bool):
            msg += f"; quote it to keep it text: '{err['input']}'"
        elif kind == "string_pattern_mismatch":
            pattern = err["ctx"]["pattern"]
            rule = _PATTERN_HELP.get(pattern, f"must match {pattern}")
            msg = f"{where}: {err['input']!r} is not valid: {rule}"
        elif kind in ("model_type", "dict_type"):
            keys = ", ".join(_known_keys(model, loc))
            msg += f"; expected a mapping with keys: {keys}" if keys else ""
        elif kind == "bool_type":
            msg += "; write true or false, unquoted"
        pos = file.position(loc)
    return pos, msg


_PATTERN_HELP = {
    NAME_RE: "use lowercase letters, digits, '.', '_' and '-', starting and ending with a "
    "letter or digit, at most 64 characters (e.g. acme-prompts)",
    SEMVER_RE: "use a SemVer 2.0.0 version such as 1.4.0 or 2.0.0-rc.1",
    PROMPT_NAME_RE: "use letters, digits, '_', '.' and '-', starting with a letter or digit",
    ARG_NAME_RE: "an argument name is 1 to 128 characters with no control characters (a "
    "template reads one that is not an identifier as args[\"name\"])",
}


def _known_keys(model: Any, loc: Loc) -> list[str]:
    schema = model
    for step in loc:
        if isinstance(step, int):
            continue
        field = schema.model_fields.get(step) if hasattr(schema, "model_fields") else None
        if field is None:
            return []
        schema = _model_of(field.annotation)
    return list(schema.model_fields) if hasattr(schema, "model_fields") else []


def _model_of(annotation: Any) -> Any:
    for arg in getattr(annotation, "__args__", ()) or ():
        found = _model_of(arg)
        if hasattr(found, "model_fields"):
            return found
    return annotation
