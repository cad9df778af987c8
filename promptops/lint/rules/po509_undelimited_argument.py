"""A free-text argument is interpolated into the first or an assistant message bare.

Why: text a user controls lands where the model takes instructions from (the opening
message, or the model's own voice), so "ignore the above and ..." works. Fence it with
delimiters the model can see: quotes, backticks, a code fence or an XML-style tag.
Arguments with an ``enum`` or a ``pattern`` are constrained and not reported, nor are
numbers and booleans (typed arguments are parsed and checked before rendering). A system
message is judged as written, whichever role ``serve.systemRole`` serves it as. A
heuristic, so a warning.

Fails::

    - role: assistant
      text: "I will review {{ code }} now."

Passes::

    - role: assistant
      text: |
        I will review the code between the tags.
        <code>{{ code }}</code>
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from promptops.lint.problem import Hit
from promptops.lint.rules._common import prompts

CODE, NAME, LEVEL, NEEDS = "PO509", "undelimited-argument", "warning", "package"

_QUOTES = {'"': '"', "'": "'", "`": "`", "“": "”", "«": "»"}
_OPEN_TAG = re.compile(r"<([A-Za-z][\w-]*)[^<>]*>$")


def delimited(source: str, start: int, end: int) -> bool:
    """Whether source[start:end] (a ``{{ ... }}``) sits between visible delimiters."""
    if source.count("```", 0, start) % 2 == 1:
        return True
    before, after = source[:start].rstrip(" "), source[end:].lstrip(" ")
    if before and before[-1] in _QUOTES and after.startswith(_QUOTES[before[-1]]):
        return True
    tag = _OPEN_TAG.search(before.rstrip())
    return tag is not None and after.lstrip().startswith(f"</{tag.group(1)}>")


def _expressions(source: str) -> Iterator[tuple[int, int, str]]:
    for m in re.finditer(r"\{\{-?(.*?)-?\}\}", source, re.S):
        yield m.start(), m.end(), m.group(1)


def check(ctx: Any) -> Iterator[Hit]:
    for prompt in prompts(ctx):
        free = {a.name for a in prompt.spec.arguments if a.enum is None and a.pattern is None
                and a.type not in ("number", "integer", "boolean")}
        for unit in ctx.units(prompt):
            if not free or not (unit.message == 0 or unit.role == "assistant"):
                continue
            facts = ctx.facts(unit.path, unit.source)
            if facts is None or (unit.loc is not None and unit.loc[-1] == "uri"):
                continue
            printed = facts.printed & free
            for start, end, inner in _expressions(unit.source):
                names = set(re.findall(r"[A-Za-z_]\w*", inner)) & printed
                if not names or delimited(unit.source, start, end):
                    continue
                lineno = unit.source.count("\n", 0, start) + 1
                first = sorted(names)[0]
                line, col = ctx.locate(unit.path, unit.loc, lineno, unit.source[start:end])
                yield Hit(unit.path, line, col,
                          f"argument {first!r} is interpolated into the "
                          f"{'assistant' if unit.role == 'assistant' else 'first'} message "
                          "without delimiters (prompt injection surface)")
