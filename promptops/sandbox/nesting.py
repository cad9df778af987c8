"""How deep a template may nest, checked on the token stream before the parser recurses.

Jinja's parser and code generator are recursive, and Python's compiler has fixed limits
of its own: 70 nested parentheses or 300 nested ``{% if %}`` exhaust the recursion limit
inside ``parse``, a 200-term ``+`` chain parses but no longer compiles ("too many nested
parentheses"), 21 nested ``{% for %}`` hit "too many statically nested blocks". A
RecursionError or SyntaxError there is a crash, and where it strikes depends on how deep
the caller's stack already is, so a package could load in one command and not another.

So the depth is bounded on the tokens, as the lexer hands them to the parser (a Jinja
extension's ``filter_stream``, no second lexing pass): past a limit the parse stops with a
``TemplateSyntaxError`` at that line, before any recursion gets deep. The limits are far
above what a prompt needs and low enough that a template within them always parses,
compiles and renders with a few hundred frames to spare
(``tests/hardening/test_content_limits.py`` checks the worst template within them):

* :data:`MAX_BLOCK_DEPTH` block tags (``if``, ``for``, ``macro``, ``call``, ``filter``,
  ``with``, ``block``, ``autoescape``, a ``set`` block) open inside each other;
* :data:`MAX_BRACKET_DEPTH` brackets (``(``, ``[``, ``{``) open inside one tag;
* :data:`MAX_EXPRESSION_DEPTH` for how deep one expression can nest: every operator,
  filter, test, attribute, subscript or call counts, as does every open bracket, along
  the chain from the outermost level to the innermost (a comma starts a new item, so a
  long list is not deep).

:func:`parse` is how every load- and lint-time parse site parses: it also turns a
RecursionError (which the limits should make impossible) into a TemplateSyntaxError, so
the caller reports a positioned problem either way.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, TypeVar

from jinja2 import Environment, TemplateSyntaxError, nodes
from jinja2.ext import Extension
from jinja2.lexer import Token, TokenStream

E = TypeVar("E", bound=Environment)
MAX_BLOCK_DEPTH = 16
MAX_BRACKET_DEPTH = 16
MAX_EXPRESSION_DEPTH = 48

_OPENERS = frozenset({"if", "for", "macro", "call", "filter", "with", "block", "autoescape"})
_OPERATORS = frozenset({"add", "sub", "mul", "div", "floordiv", "mod", "pow", "tilde", "pipe",
                        "dot", "eq", "ne", "gt", "gteq", "lt", "lteq"})
_WORD_OPERATORS = frozenset({"and", "or", "not", "in", "is", "if", "else"})
_OPEN = frozenset({"lparen", "lbracket", "lbrace"})
_CLOSE = frozenset({"rparen", "rbracket", "rbrace"})
_TOO_MANY_BLOCKS = f"more than {MAX_BLOCK_DEPTH} block tags open inside each other"


class NestingGuard(Extension):
    """Stops the parse with a positioned TemplateSyntaxError past any nesting limit."""

    def filter_stream(self, stream: TokenStream) -> Iterator[Token]:
        return _guarded(stream)


_BEGIN, _NAME, _OP, _OPENING, _CLOSING, _ITEM, _ASSIGN, _END = range(1, 9)
_CODE = {"variable_begin": _BEGIN, "block_begin": _BEGIN, "name": _NAME, "comma": _ITEM,
         "colon": _ITEM, "assign": _ASSIGN, "variable_end": _END, "block_end": _END,
         **dict.fromkeys(_OPERATORS, _OP), **dict.fromkeys(_OPEN, _OPENING),
         **dict.fromkeys(_CLOSE, _CLOSING)}


def _guarded(stream: TokenStream) -> Iterator[Token]:  # complexity: a parser's state machine
    """The tokens, unchanged, until one crosses a limit (then TemplateSyntaxError there).

    Complexity 26, on purpose: a pushdown recognizer over Jinja's token stream, one branch
    per token class with its state (open blocks, brackets, operators per item) in locals.
    Split into methods, every token of every template would pay a call and an attribute
    load; this loop is on the parse path of every build.

    On the parse path of every template, so written for speed: one dict lookup for
    the tokens that cannot nest anything (text, names, literals).
    """
    code_of = _CODE.get
    blocks = 0  # block tags open
    levels: list[int] = []  # per open bracket (plus the tag itself): operators in this item
    depth = 0  # sum(levels) + open brackets: how deep the current point can nest
    tag: str | None = None  # the first name of the current {% %} tag
    assigns = False  # the current `set` tag has `=` (then it opens no block)
    for token in stream:
        code = code_of(token.type)
        if code is None:
            yield token
            continue
        if code == _NAME:
            if tag == "":  # the tag's name: {% if ... %}, {% endfor %}
                tag = token.value
                if tag in _OPENERS:
                    blocks += 1
                    if blocks > MAX_BLOCK_DEPTH:
                        _refuse(token, _TOO_MANY_BLOCKS)
                elif tag.startswith("end"):
                    blocks -= 1
            elif token.value in _WORD_OPERATORS and levels:
                levels[-1] += 1
                depth += 1
        elif code == _OP:
            if levels:
                levels[-1] += 1
                depth += 1
        elif code == _BEGIN:
            levels, depth, assigns = [0], 0, False
            tag = "" if token.type == "block_begin" else None
        elif code == _OPENING:
            if len(levels) > MAX_BRACKET_DEPTH:
                _refuse(token, f"more than {MAX_BRACKET_DEPTH} brackets open inside each other")
            if levels:
                levels[-1] += 1  # the call, subscript or literal wraps what it follows
            levels.append(0)
            depth += 2
        elif code == _CLOSING:
            if len(levels) > 1:
                depth -= levels.pop() + 1
        elif code == _ITEM:
            if levels:
                depth -= levels[-1]
                levels[-1] = 0
        elif code == _ASSIGN:
            assigns = True
        else:  # _END
            if tag == "set" and not assigns:  # {% set x %}...{% endset %} is a block
                blocks += 1
                if blocks > MAX_BLOCK_DEPTH:
                    _refuse(token, _TOO_MANY_BLOCKS)
            levels, depth, tag = [], 0, None
        if depth > MAX_EXPRESSION_DEPTH:
            _refuse(token, f"an expression nested more than {MAX_EXPRESSION_DEPTH} levels "
                    "deep (operators, filters, attributes, calls and brackets inside each "
                    "other)")
        yield token


def _refuse(token: Token, what: str) -> None:
    raise TemplateSyntaxError(f"template too deeply nested: {what}; split it up (macros or "
                              "`{% set %}` steps)", token.lineno)


def guard(env: E) -> E:
    """``env`` with the nesting guard installed (idempotent); returns ``env``."""
    if NestingGuard.identifier not in env.extensions:
        env.add_extension(NestingGuard)
    return env


def parse(env: Any, source: str) -> nodes.Template:
    """``env.parse(source)`` under the nesting limits; TemplateSyntaxError on any refusal.

    ``env`` is a guarded environment (or a stand-in that parses with one); the
    RecursionError branch is the backstop should a construct the guard does not count
    still recurse: it is caught here, at the top of the parse, so the stack has unwound.
    """
    try:
        ast: nodes.Template = env.parse(source)
    except RecursionError:
        raise TemplateSyntaxError("template too deeply nested to parse; split it up", 1) from None
    return ast
