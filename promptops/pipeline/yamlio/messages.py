"""How a mistake reads to a person: the place, the rule, and how to fix it.

pydantic's messages name the validator ("Input should be a valid string") and YAML
parsers name their state ("did not find expected '-' indicator"); a prompt author needs
the key, the real position, and the fix ("quote it", "move it to column 5", "did you
mean ...?").
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from promptops.errors import closest
from promptops.pipeline.bundle_types import ARG_NAME_RE
from promptops.pipeline.manifest import NAME_RE, SEMVER_RE
from promptops.pipeline.model import PROMPT_NAME_RE

if TYPE_CHECKING:  # types only: the loader imports this module for its messages
    from promptops.pipeline.yamlio.loader import LoadedFile, Loc


def schema_problem(model: object, file: LoadedFile, err: Any) -> tuple[tuple[int, int], str]:
    """Where a pydantic error points in the file, and how it reads to a person."""
    loc: Loc = tuple(err["loc"])
    kind = err["type"]
    where = ".".join(str(x) for x in loc) or "document"
    if kind == "extra_forbidden":
        known = _known_keys(model, loc[:-1])
        close = closest(str(loc[-1]), known)
        hint = f"; did you mean {close!r}?" if close else f"; allowed: {', '.join(known)}"
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


def _known_keys(model: object, loc: Loc) -> list[str]:
    schema = model
    for step in loc:
        if isinstance(step, int):
            continue
        field = schema.model_fields.get(step) if hasattr(schema, "model_fields") else None
        if field is None:
            return []
        schema = _model_of(field.annotation)
    return list(schema.model_fields) if hasattr(schema, "model_fields") else []


def _model_of(annotation: object) -> object:
    for arg in getattr(annotation, "__args__", ()) or ():
        found = _model_of(arg)
        if hasattr(found, "model_fields"):
            return found
    return annotation


# -- YAML syntax errors in plain words ------------------------------------------------------
#
# libyaml and ruamel.yaml word one mistake differently ("mapping values are not allowed in
# this context" / "... here"; "did not find expected key" / "expected <block end>, but
# found '<scalar>'") and both report where the parser gave up, which for a runaway quote or
# a misaligned key is lines away from the mistake. So each rule below takes the error's
# words and marks, reads the lines around them, and names the real place and the edit that
# fixes it; the first rule that recognises the error wins, and an error none knows keeps
# the parser's own words at its position. tests/pipeline/test_yaml_messages.py runs every case
# through both parsers and checks the exact text.

_KEY = re.compile(r"""^(?P<indent>\x20*)(?P<dashes>(?:-\x20+)*)
    (?P<key>[^\s:#'"{\[][^:#]*?|"[^"]*"|'[^']*'):(?:\s|$)""", re.X)

Mark = tuple[int, int]  # 1-based line, column


@dataclass(frozen=True)
class _Error:
    """What a parser said, in the terms the rules need."""

    problem: str
    context: str
    at: Mark  # where the parser stopped (its problem mark, else its context mark)
    opened: Mark | None  # its context mark: where the construct it was reading began
    lines: list[str]
    text: str

    def line(self, n: int) -> str:
        return self.lines[n - 1] if 0 < n <= len(self.lines) else ""


def _mark(mark: Any) -> Mark | None:
    return None if mark is None else (mark.line + 1, mark.column + 1)


def _key_at(line: str) -> tuple[int, str] | None:
    """(1-based column of the key, the key) when ``line`` is ``key:`` or ``- key:``."""
    m = _KEY.match(line)
    if m is None:
        return None
    return len(m.group("indent")) + len(m.group("dashes")) + 1, m.group("key").strip("'\"")


def _quoted(value: str) -> str:
    """``value`` as a YAML quoted scalar, in the quotes that need no escaping."""
    if '"' in value and "'" not in value:
        return f"'{value}'"
    return json.dumps(value, ensure_ascii=False)


def _significant(line: str) -> bool:
    s = line.strip()
    return bool(s) and not s.startswith("#")


def _unclosed_quote(e: _Error) -> tuple[Mark, str] | None:
    if "quoted scalar" not in e.context or e.opened is None or "end of stream" not in e.problem:
        return None
    q = e.line(e.opened[0])[e.opened[1] - 1: e.opened[1]] or "'"
    return e.opened, (f"this {q}...{q} string is never closed: add the closing {q} at the end "
                      f"of the value on line {e.opened[0]}, or, for text over several lines, "
                      "use a block scalar (`key: |`)")


def _quoted_scalars(text: str) -> list[tuple[Mark, Mark, str]]:
    """(start, end, quote) of every quoted scalar PyYAML's scanner reads before the error."""
    import yaml

    out: list[tuple[Mark, Mark, str]] = []
    try:
        for tok in yaml.scan(text, Loader=yaml.SafeLoader):
            if isinstance(tok, yaml.ScalarToken) and tok.style in ("'", '"'):
                out.append(((tok.start_mark.line + 1, tok.start_mark.column + 1),
                            (tok.end_mark.line + 1, tok.end_mark.column + 1), tok.style))
    except yaml.YAMLError:
        pass
    return out


def _quote_ends_early(e: _Error) -> tuple[Mark, str] | None:
    """``'Don't panic'`` (the quote closes at the apostrophe), or a quote that runs on."""
    if "expected key" not in e.problem and "expected <block end>" not in e.problem:
        return None
    for start, end, q in _quoted_scalars(e.text):
        if end > e.at:
            break
        if (end == e.at and start[0] == e.at[0] and q == "'"
                and re.match(r"\w", e.line(e.at[0])[e.at[1] - 1:])):
            line = e.line(e.at[0])
            raw = line[start[1] - 1:].rstrip()
            inner = raw[1:-1] if raw.endswith("'") and len(raw) > 1 else raw[1:]
            head = line[:start[1] - 1].rstrip()
            doubled = inner.replace("'", "''")
            return start, (f"a ' inside a '...' string ends it: double it ({head} '{doubled}') "
                           f"or use double quotes ({head} {json.dumps(inner, ensure_ascii=False)})")
        if end[0] > start[0] and any(_key_at(s) for s in e.lines[start[0]:end[0] - 1]):
            return start, (f"the string opened with {q} on line {start[0]} is not closed on that "
                           f"line, so it runs on to line {end[0]} and swallows the keys in "
                           f"between: close it with {q} on line {start[0]}")
    return None


def _tab(e: _Error) -> tuple[Mark, str] | None:
    if "tab" not in e.problem and "'\\t'" not in e.problem:
        return None
    for n in range(e.at[0], 0, -1):  # the parsers point at the tab or just after it
        line = e.line(n)
        if "\t" in line[: len(line) - len(line.lstrip())]:
            return (n, line.index("\t") + 1), ("this line is indented with a tab; YAML "
                                               "indentation must be spaces: replace the tab "
                                               "with spaces")
    return e.at, "a tab where YAML expects spaces: replace it with spaces"


def _template_value(e: _Error) -> tuple[Mark, str] | None:
    for n in sorted({e.at[0], *([e.opened[0]] if e.opened else [])}):
        line = e.line(n)
        key = _key_at(line)
        if key is None:
            continue
        value = line[line.index(":", key[0] - 1) + 1:].strip()
        if value.startswith(("{{", "{%")):
            return (n, line.index("{") + 1), (
                f"the value of `{key[1]}` starts with '{value[:2]}', which YAML reads as a "
                f"mapping: quote it ({key[1]}: {_quoted(value)}) or use a block scalar "
                f"({key[1]}: |)")
    return None


def _duplicate_key(e: _Error) -> tuple[Mark, str] | None:
    m = re.match(r'found duplicate key "(?P<key>[^"]*)"', e.problem)
    if m is None:
        return None
    key, here = m.group("key"), e.line(e.at[0])
    col = len(here) - len(here.lstrip(" -")) + 1
    first = next((n for n in range((e.opened or (1, 1))[0], e.at[0])
                  if _key_at(e.line(n)) == (col, key)), None)
    where = f" (first on line {first})" if first else ""
    return (e.at[0], col), (f"`{key}` appears twice in this mapping{where}: keep one; YAML "
                            "would silently use only the last")


def _colon_in_value(e: _Error) -> tuple[Mark, str] | None:
    if "mapping values are not allowed" not in e.problem:
        return None
    line = e.line(e.at[0])
    key = _key_at(line)
    if key is None or line.index(":", key[0] - 1) + 1 == e.at[1]:
        return None  # the colon is the key's own: an indentation problem
    head = line[: line.index(":", key[0] - 1) + 1]
    value = line[len(head):].strip()
    return e.at, (f"': ' inside the value of `{key[1]}` reads as a new key: put the value in "
                  f"quotes: {head.strip()} {_quoted(value)}")


def _over_indented(e: _Error) -> tuple[Mark, str] | None:
    if "mapping values are not allowed" not in e.problem:
        return None
    key = _key_at(e.line(e.at[0]))
    prev = next((n for n in range(e.at[0] - 1, 0, -1) if _significant(e.line(n))), None)
    if key is None or prev is None:
        return None
    above = _key_at(e.line(prev))
    if above is None or above[0] >= key[0]:
        return None
    return (e.at[0], key[0]), (
        f"`{key[1]}` is indented more than `{above[1]}` on line {prev}, so YAML reads it as "
        f"more of {above[1]}'s value: start it in column {above[0]}, like `{above[1]}`")


def _misaligned(e: _Error) -> tuple[Mark, str] | None:
    if not any(s in e.problem for s in ("expected key", "expected <block end>", "'-' indicator")):
        return None
    line = e.line(e.at[0])
    col = len(line) - len(line.lstrip(" ")) + 1
    key = _key_at(line)
    above: list[tuple[int, int, int | None, str]] = []  # line, key column, dash column, key
    for n in range(e.at[0] - 1, 0, -1):
        s = e.line(n)
        found = _key_at(s) if _significant(s) else None
        if found is None:
            continue
        dash = len(s) - len(s.lstrip(" ")) + 1 if s.lstrip(" ").startswith("- ") else None
        above.append((n, found[0], dash, found[1]))
        if found[0] == 1 and dash is None:
            break
    if line.lstrip(" ").startswith("- "):
        items = [(n, d) for n, _, d, _ in above if d is not None and d != col]
        if items:
            return (e.at[0], col), (f"this list item's '-' is in column {col}, the items above "
                                    f"it (line {items[0][0]}) have theirs in column "
                                    f"{items[0][1]}: align the '-'")
    if key is None:
        return None
    deeper = [(n, c, k) for n, c, _, k in above if c > col]
    dashes = [n for n, _, d, _ in above if d == col]
    if dashes and deeper:  # a key at the column of the list's '-', without a '-'
        sn, sc, sk = deeper[0]
        return (e.at[0], col), (
            f"`{key[1]}` is in column {col}, the column of the '-' of the list item on line "
            f"{dashes[0]}: start a new item with '- {key[1]}:', or move it to column {sc} to "
            f"belong to the item above (like `{sk}`, line {sn})")
    if deeper:
        sn, sc, sk = deeper[0]
        outer = [(n, c, k) for n, c, _, k in above if c < col]
        alt = (f", or to column {outer[0][1]} to end the list (like `{outer[0][2]}`, line "
               f"{outer[0][0]})") if outer else ""
        return (e.at[0], col), (f"`{key[1]}` starts in column {col}, but `{sk}` above it "
                                f"(line {sn}) starts in column {sc}: move it to column {sc}{alt}")
    return None


_RULES = (_unclosed_quote, _quote_ends_early, _tab, _template_value, _duplicate_key,
          _colon_in_value, _over_indented, _misaligned)


def yaml_syntax_message(text: str, exc: object) -> tuple[Mark, str]:
    """Where a YAML parser error really is, and how to fix it; never raises.

    ``exc`` is a libyaml/PyYAML or ruamel.yaml ``MarkedYAMLError`` (anything with
    ``problem``, ``context`` and their marks).
    """
    problem = (getattr(exc, "problem", None) or "").strip()
    context = (getattr(exc, "context", None) or "").strip()
    opened = _mark(getattr(exc, "context_mark", None))
    at = _mark(getattr(exc, "problem_mark", None)) or opened or (1, 1)
    error = _Error(problem, context, at, opened, text.split("\n"), text)
    for rule in _RULES:
        try:
            found = rule(error)
        except (ValueError, IndexError):  # a rule that misreads odd text must not hide the error
            found = None
        if found is not None:
            return found
    return at, f"invalid YAML: {problem or context or 'cannot be parsed'}"
