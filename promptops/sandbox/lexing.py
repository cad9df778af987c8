"""Jinja's lexer with its scan for the next tag made to skip plain text in runs.

Where no template text repeats, validation parses every template once and the parse is the
build's largest cost (issue 26 item 1, session 10: 10,000 distinct prompts). Half of the
parse was one regular expression: Jinja's rule for the text before the next tag is
``(.*?)(?:{%...|{{...|{#...)``, which tries every alternative at every character of the
text, and real prompts are mostly text (4 KB a template, a few tags).

:class:`ScanningLexer` is Jinja's lexer with that rule's ``(.*?)`` written as
``((?:[^{]++|\\{)*?)``: still lazy, the same groups, the same alternatives after it, but the
candidate split points it tries are the start, each ``{`` and the end of each run of other
characters. Every alternative starts with ``{`` (the three start strings are Jinja's
defaults and there is no line statement or line comment prefix), so a split point inside
a run cannot be followed by a tag: the first point where the alternatives match is the
same, the match is the same, and so is every token. Otherwise (other delimiters, or a
Jinja whose rule reads differently) the rule is left as Jinja wrote it. The possessive
``++`` keeps a text with no tag linear (no backtracking into a run).
``tests/pipeline/test_lexing.py`` holds the tokens equal to Jinja's own lexer's.

Data tokens are also not re-normalised when they hold no ``\\r``: with ``\\n`` as the
newline sequence, Jinja's substitution of every line break by ``\\n`` returns the text
unchanged there. Nor is a whole source without ``\\r`` split into lines and joined again
before lexing (:class:`_Breaks`).
"""

from __future__ import annotations

import functools
import operator
import re
import types
from typing import TYPE_CHECKING, NamedTuple, cast

from jinja2 import lexer as jinja_lexer
from jinja2.lexer import Lexer, _Rule, newline_re

if TYPE_CHECKING:
    from jinja2 import Environment

_JINJA_TEXT = "(.*?)(?:"
_RUNS = "((?:[^{]++|\\{)*?)(?:"


class Syntax(NamedTuple):
    """The settings a lexer is made of (what Jinja's ``get_lexer`` keys its cache on);
    a lexer reads nothing else from its environment."""

    block_start_string: str
    block_end_string: str
    variable_start_string: str
    variable_end_string: str
    comment_start_string: str
    comment_end_string: str
    line_statement_prefix: str | None
    line_comment_prefix: str | None
    trim_blocks: bool
    lstrip_blocks: bool
    newline_sequence: str
    keep_trailing_newline: bool


class _Breaks:
    """What Jinja's ``tokeniter`` splits a source with (its ``newline_re``), for a source
    it would give back unchanged: ``tokeniter`` starts with
    ``"\\n".join(newline_re.split(source)[::2])``, the last line dropped when it is empty
    and ``keep_trailing_newline`` is off. With no ``\\r`` in the source, the lines joined
    by ``\\n`` are the source itself; only whether the last line is empty matters. So the
    pieces handed back are the source (or the source less its final ``\\n``, and the
    empty last line), which the same code joins into the same text, instead of one string
    a line: splitting a 170 KB template into its lines and joining them again was two
    thirds of lexing it, for the build's parse and lint's scans of rendered text alike
    (issue 26 item 1, session 17; ``tests/pipeline/test_lexing.py`` holds the tokens equal
    to Jinja's own lexer's). A source with ``\\r`` is split by Jinja's own expression."""

    @staticmethod
    def split(source: str) -> list[str]:
        if "\r" in source:
            return newline_re.split(source)
        if source.endswith("\n"):
            return [source[:-1], "\n", ""]  # [::2]: the text before it and the empty line
        return [source]


def _tokeniter() -> types.FunctionType:
    """Jinja's own ``Lexer.tokeniter`` (the same code object, not a copy of its 200 lines)
    reading :class:`_Breaks` as its ``newline_re``: the function's globals are its
    module's, that one name aside; Jinja's module is not touched."""
    jinja = Lexer.tokeniter
    names = {**vars(jinja_lexer), "newline_re": _Breaks()}
    return types.FunctionType(jinja.__code__, names, jinja.__name__, jinja.__defaults__,
                              jinja.__closure__)


class ScanningLexer(Lexer):
    """Jinja's lexer, its text-before-a-tag rule scanning runs (module docstring)."""

    tokeniter = _tokeniter()

    def __init__(self, environment: Environment | Syntax) -> None:
        syntax = cast("Environment", environment)  # Jinja reads only Syntax's fields
        super().__init__(syntax)
        default_starts = {syntax.block_start_string[:1], syntax.variable_start_string[:1],
                          syntax.comment_start_string[:1]} == {"{"}
        no_line_rules = (syntax.line_statement_prefix is None
                         and syntax.line_comment_prefix is None)
        rule = self.rules["root"][0]
        pattern = rule.pattern.pattern
        if default_starts and no_line_rules and pattern.startswith(_JINJA_TEXT):
            fast = re.compile(_RUNS + pattern[len(_JINJA_TEXT):], rule.pattern.flags)
            self.rules["root"][0] = _Rule(fast, rule.tokens, rule.command)

    def _normalize_newlines(self, value: str) -> str:
        if self.newline_sequence == "\n" and "\r" not in value:
            return value  # every line break is already "\n"
        return newline_re.sub(self.newline_sequence, value)


def lexer(environment: Environment) -> Lexer:
    """The :class:`ScanningLexer` for ``environment``'s syntax, one per syntax (as Jinja's
    ``get_lexer`` keeps one per syntax)."""
    return _for(Syntax._make(_SETTINGS(environment)))


_SETTINGS = operator.attrgetter(*Syntax._fields)


@functools.cache
def _for(syntax: Syntax) -> ScanningLexer:
    return ScanningLexer(syntax)
