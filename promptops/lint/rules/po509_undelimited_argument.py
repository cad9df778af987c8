"""Untrusted text is interpolated bare where the model takes instructions from.

Why: an injection surface is where text the prompt's author did not write lands with the
author's authority: retrieved or third-party content (documents, search results, another
agent's output, a web page) anywhere in the instructions, or the user's own request placed
in the model's voice (an ``assistant`` or ``system`` message; a system message is judged as
written, whichever role ``serve.systemRole`` serves it as). "Ignore the above and ..." then
works. Fence it with delimiters the model can see: quotes, backticks, a code fence or an
XML-style tag.

Not a surface, measured on real prompts (most of the old findings): the request itself in a
user message (``Question: {{ question }}`` in the last user message *is* the request), a
caller's setting (a persona, a language, a name), a number (by name, default or type:
``number``, ``integer`` and ``boolean`` arguments are parsed and checked before rendering),
and arguments constrained by ``enum`` or ``pattern``. Third-party content is recognised by
the argument's name or description (context, document, retrieved, search, research, source,
page, email, feedback, response ...). A user message followed by more of the prompt's own
messages is a surface too: the argument is then content the later instructions act on, not
the request. A heuristic, so a warning, reported once per argument and prompt.

Measured on the real-prompt corpus: 14/17 findings real (82%).

Fails::

    arguments: [{name: context}, {name: question}]
    messages:
      - role: assistant
        text: "Answer from these documents: {{ context }}"
      - role: user
        text: "{{ question }}"

Passes::

    arguments: [{name: context}, {name: question}]
    messages:
      - role: assistant
        text: "Answer from the documents in the tags. <docs>{{ context }}</docs>"
      - role: user
        text: "Question: {{ question }}"
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from promptops.lint.problem import Hit
from promptops.lint.rules._common import prompts

if TYPE_CHECKING:
    from promptops.lint.context import LintContext
    from promptops.pipeline.model import Argument


CODE, NAME, LEVEL, NEEDS = "PO509", "undelimited-argument", "warning", "package"

_QUOTES = {'"': '"', "'": "'", "`": "`", "“": "”", "«": "»"}
_OPEN_TAG = re.compile(r"<([A-Za-z][\w-]*)[^<>]*>$")


def delimited(source: str, start: int, end: int) -> bool:
    """Whether source[start:end] (a ``{{ ... }}``) sits between visible delimiters."""
    if source.count("```", 0, start) % 2 == 1:
        return True
    # Positions, not copies: slicing the text before and after each expression and searching
    # the whole prefix for an open tag made a template's cost grow with its size squared.
    stop = start  # source[:stop] is the text before, spaces stripped
    while stop and source[stop - 1] == " ":
        stop -= 1
    begin = end  # source[begin:] is the text after, spaces stripped
    while begin < len(source) and source[begin] == " ":
        begin += 1
    if stop and source[stop - 1] in _QUOTES and source.startswith(_QUOTES[source[stop - 1]],
                                                                  begin):
        return True
    while stop and source[stop - 1].isspace():
        stop -= 1
    opened = source.rfind("<", 0, stop)  # an open tag ending here starts at the last "<"
    tag = _OPEN_TAG.match(source, opened, stop) if opened >= 0 else None
    while begin < len(source) and source[begin].isspace():
        begin += 1
    return tag is not None and source.startswith(f"</{tag.group(1)}>", begin)


_THIRD_PARTY = re.compile(
    r"context|document|\bdocs?\b|retriev|search|research|source|\bpages?\b|html|e-?mail|"
    r"article|transcript|feedback|response|completion|passage|snippet|chunk|excerpt|"
    r"web|scraped|tool.?output|results?\b", re.I)
_REQUEST = re.compile(r"^(?:question|query|input|request|message|prompt|user_?input|ask)s?$",
                      re.I)
_NUMBER = re.compile(r"amount|count|number|\bnum\b|\bage\b|price|quantity|total|year|"
                     r"limit|^n$|^max|^min", re.I)
_WORDS = re.compile(r"(?<=[a-z])(?=[A-Z])|_|-")


def _words(name: str) -> str:
    return " ".join(_WORDS.split(name))


def _foreign(text: str) -> bool:
    return _THIRD_PARTY.search(text) is not None


def third_party(ctx: LintContext, arg: Argument) -> bool:
    """Content from elsewhere, by what the argument's name or description says it holds
    (each text searched once: the pattern is long, and descriptions repeat across prompts)."""
    return ctx.memo("PO509-name", arg.name, lambda name: _foreign(_words(name))) or bool(
        arg.description and ctx.memo("PO509-text", arg.description, _foreign))


def _numeric(ctx: LintContext, arg: Argument) -> bool:
    if ctx.memo("PO509-number", arg.name,
                lambda name: _NUMBER.search(_words(name)) is not None):
        return True
    default = arg.default or "x"
    if not isinstance(default, str | int | float):  # a typed default: a list or an object
        return False
    try:
        float(default)
    except ValueError:
        return False
    return True


_EXPRESSION = re.compile(r"\{\{-?(.*?)-?\}\}", re.S)
_NAME = re.compile(r"[A-Za-z_]\w*")


def _scan(source: str) -> list[tuple[int, int, frozenset[str]]]:
    """(start, end, names) of each ``{{ }}`` of ``source``: what does not depend on the
    prompt, once per distinct source. The patterns compiled once and no generator between:
    Markdown imported from Handlebars (tests/corpus/speed5) holds dozens of ``{{name}}``
    per prompt, and looking each pattern up in ``re``'s cache per expression was a third
    of this scan."""
    return [(m.start(), m.end(), frozenset(_NAME.findall(m.group(1))))
            for m in _EXPRESSION.finditer(source)]


def _shielded(ctx: LintContext, source: str, start: int, end: int) -> bool:
    """:func:`delimited`, once per distinct source and expression, asked only of expressions
    that print a surface argument (as before: most never need it)."""
    known: dict[int, bool] = ctx.memo("PO509-delimited", source, lambda _: {})
    if start not in known:
        known[start] = delimited(source, start, end)
    return known[start]


def check(ctx: LintContext) -> Iterator[Hit]:
    for prompt in prompts(ctx):
        free = {a.name: a for a in prompt.spec.arguments
                if a.enum is None and a.pattern is None
                and a.type not in ("number", "integer", "boolean") and not _numeric(ctx, a)}
        if not free:
            continue
        last = len(prompt.spec.messages) - 1
        reported: set[str] = set()  # once per argument and prompt
        for unit in ctx.units(prompt):
            facts = ctx.facts(unit.path, unit.source)
            if facts is None or (unit.loc is not None and unit.loc[-1] == "uri"):
                continue
            assistant = unit.role in ("assistant", "system")  # the model's own voice
            followed = not assistant and unit.message is not None and unit.message < last
            surface = {name for name in facts.printed & set(free)
                       if _exposed(ctx, free[name], name, assistant=assistant,
                                      followed=followed)}
            for start, end, words in ctx.memo(CODE, unit.source, _scan):
                names = words & surface - reported
                if not names or _shielded(ctx, unit.source, start, end):
                    continue
                reported |= names
                lineno = unit.source.count("\n", 0, start) + 1
                first = sorted(names)[0]
                line, col = ctx.locate(unit.path, unit.loc, lineno, unit.source[start:end])
                yield Hit(unit.path, line, col,
                          _message(first, third_party(ctx, free[first]), unit.role, followed))


def _message(name: str, foreign: bool, role: str | None, followed: bool) -> str:
    what = "third-party content" if foreign else "text"
    where = ("an assistant message" if role == "assistant"
             else "a system message" if role == "system"
             else "a user message" + (" the prompt's own messages follow" if followed else ""))
    return (f"argument {name!r} ({what}) is interpolated into {where} "
            "without delimiters (prompt injection surface)")


def _exposed(ctx: LintContext, arg: Argument, name: str, *, assistant: bool,
             followed: bool) -> bool:
    """Printed here, is this free-text argument a surface? Third-party content always; any
    text when the prompt's own messages follow it; in the model's voice, a request name."""
    return third_party(ctx, arg) or followed or (assistant and _REQUEST.match(name) is not None)
