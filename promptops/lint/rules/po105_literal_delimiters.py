"""Jinja delimiters inside inline code in prose, where they were probably meant literally.

Why: a prompt that *explains* template syntax (``write `{{ name }}` to insert a
name``) has its example rendered away: Jinja evaluates it, usually to an error or to
nothing. Wrap literal text in ``{% raw %}...{% endraw %}`` (any form: ``{%- raw %}``,
``{%+ raw %}``...). A span whose expressions all read declared arguments
(``run `{{ branch }}` ``) puts the value in code on purpose and is not reported, unless its
line says the text is meant literally (literal, verbatim, syntax, placeholder, escape).

Measured on the real-prompt corpus: no finding in 78 prompts.

Fails::

    text: "Write `{{ name }}` literally where the user's name goes."

Passes::

    text: "Write `{% raw %}{{ name }}{% endraw %}` literally where the user's name goes."
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from promptops.lint.problem import Hit
from promptops.lint.rules._common import prompts

if TYPE_CHECKING:
    from promptops.lint.context import LintContext


CODE, NAME, LEVEL, NEEDS = "PO105", "literal-delimiters", "warning", "package"
# A template many prompts render is judged once, with the first one's (by name) arguments.
FIRST = True

_SPAN = re.compile(r"`[^`\n]*?(\{\{|\{%|\{#)[^`\n]*?`")
# Every form Jinja accepts: ``-`` and ``+`` whitespace markers on either side of the tag.
_RAW = re.compile(r"\{%[-+]?\s*raw\s*[-+]?%\}.*?\{%[-+]?\s*endraw\s*[-+]?%\}", re.S)
_EXPR = re.compile(r"\{\{(.*?)\}\}", re.S)
_NOT_NEWLINE = re.compile(r"[^\n]")
# What every span holds: a Jinja opener. Once the raw blocks are blanked, a source without
# one has no span, and this literal-first scan costs less than trying each backtick.
_OPENER = re.compile(r"\{[{%#]")
_WORD = re.compile(r"[A-Za-z_]\w*")
_LITERAL = re.compile(
    r"\b(?:literal(?:ly)?|verbatim|syntax|placeholders?|escaped?|as[- ]is)\b", re.I)


def meant(span: str, declared: set[str]) -> bool:
    """Whether every Jinja construct in the span is an expression of a declared argument:
    the author puts the argument's value in code on purpose (```{{ branch }}```)."""
    rest = _EXPR.sub("", span)
    if "{%" in rest or "{#" in rest:
        return False
    return all(set(_WORD.findall(m.group(1))) & declared for m in _EXPR.finditer(span))


def check(ctx: LintContext) -> Iterator[Hit]:
    done: set[tuple[str, object]] = set()
    for prompt in prompts(ctx):
        declared = {a.name for a in prompt.spec.arguments}
        for unit in ctx.units(prompt):
            for path, loc, source in [(unit.path, unit.loc, unit.source)] + [
                (p, None, ctx.pkg.templates[p]) for p in ctx.reached(unit.path, unit.source)
            ]:
                key = (path, loc)
                if key in done:
                    continue
                done.add(key)
                for span, opener, literal, lineno in ctx.memo(CODE, source, _spans):
                    if meant(span, declared) and not literal:
                        continue
                    line, col = ctx.locate(path, loc, lineno, span)
                    yield Hit(path, line, col,
                              f"{opener!r} inside inline code is evaluated by Jinja; "
                              "if it is meant literally wrap it in {% raw %}...{% endraw %}")


def _spans(source: str) -> list[tuple[str, str, bool, int]]:
    """(span, its Jinja opener, does its line say it is literal?, line) of each inline code
    span holding Jinja syntax outside raw blocks: what does not depend on the prompt, once
    per distinct source. A span is inside backticks: a source without one has none, and a
    test for one character costs a tenth of either expression's pass (real prompts of
    200 KB, issue 26, session 16); masking leaves every backtick where it was. Nothing
    is masked without a ``raw`` tag, and each span's line is counted on from the last
    one's, not from the start: a template's cost grows with its size, not with its size
    times its spans (session 17; ``tests/lint/test_speed_equivalence.py`` holds it equal
    to the form that counted from the start)."""
    out: list[tuple[str, str, bool, int]] = []
    if "`" not in source:
        return out
    masked = source if "raw" not in source else _RAW.sub(_blank, source)
    if _OPENER.search(masked) is None:
        return out
    line, counted = 1, 0
    for m in _SPAN.finditer(masked):
        line_start = masked.rfind("\n", 0, m.start()) + 1
        line_end = masked.find("\n", m.end())
        prose = masked[line_start:line_end if line_end >= 0 else None]
        line += source.count("\n", counted, m.start())
        counted = m.start()
        out.append((m.group(0), m.group(1), _LITERAL.search(prose) is not None, line))
    return out


def _blank(block: re.Match[str]) -> str:
    """A raw block as spaces, its line breaks kept, so every offset and line of the masked
    text is the source's. A block on one line is one multiplication: Markdown imported from
    Handlebars (MCP prompt servers, tests/corpus/speed5) escapes each ``{{name}}`` in a raw
    block of its own, and a substitution per block was half of this rule's cost there."""
    text = block.group(0)
    return " " * len(text) if "\n" not in text else _NOT_NEWLINE.sub(" ", text)
