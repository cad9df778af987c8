"""Jinja source as Jinja's own lexer cuts it: text, ``{{ }}``, ``{% %}``, ``{# #}`` and raw blocks.

The standalone whitespace rule, the escaping of literal text and the exporters' analysis all
need to know exactly where each tag of a template starts and ends, including the cases that
trip a naive regex: a ``%}`` inside a string literal (``{% set x = "%}" %}``), a ``}}`` inside
a dict literal (``{{ {'a': {'b': 1}} }}``), the ``-``/``+`` whitespace modifiers and
``{% raw %}`` blocks whose content is never scanned. Jinja's lexer does not expose source
offsets (and its token stream has already applied ``-`` stripping and dropped comments), so
this module re-implements the lexer's cutting rules for the default delimiters, in one linear
pass, and nothing else: it never validates what is inside a tag - Jinja does that when the
template is compiled, with its own error messages.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Kind = Literal["text", "var", "block", "comment", "raw_begin", "raw_text", "raw_end"]
TAG_KINDS = frozenset({"var", "block", "comment", "raw_begin", "raw_end"})

# Jinja's root rule: the earliest "{{", "{%" or "{#"; at "{%", a raw block is tried first.
_OPEN = re.compile(r"\{[{%#]")
_RAW_BEGIN = re.compile(r"\{%([-+]?)\s*raw\s*(-%\}|%\})")
_RAW_END = re.compile(r"\{%([-+]?)\s*endraw\s*(\+%\}|-%\}|%\})")
_COMMENT_END = re.compile(r"[-+]?#\}")
_CLOSERS = {"{{": ("-}}", "}}"), "{%": ("-%}", "+%}", "%}")}
_QUOTED = re.compile(r"""'[^'\\]*(?:\\.[^'\\]*)*'|"[^"\\]*(?:\\.[^"\\]*)*\"""", re.S)
_OPENERS, _CLOSING = "([{", ")]}"
# a run of tag characters _tag_end steps over one by one otherwise: no quote, no bracket,
# and no first character of a closer ("-", "+", "%", "}")
_PLAIN = re.compile(r"""[^'"()\[\]{}%+\-]+""")


@dataclass(frozen=True, slots=True)
class Token:
    """One piece of the source: ``source[start:end]``.

    For tags, ``open_end`` is the offset just after the opening delimiter and its modifier
    (``{%-``) and ``close_start`` the offset of the closing delimiter with its modifier
    (``-%}``), so a caller can put whitespace *inside* a tag, where Jinja ignores it.
    """

    kind: Kind
    start: int
    end: int
    open_end: int = 0
    close_start: int = 0
    plus: bool = False  # a "+" modifier on either side ({%+ ... %}, {% ... +%}, {#+ ... #})


def tokenize(source: str) -> list[Token]:
    """Every piece of ``source`` in order; the pieces cover the source exactly.

    An unterminated tag runs to the end of the source (Jinja reports it when compiling).
    """
    tokens: list[Token] = []
    pos, n = 0, len(source)
    while pos < n:
        m = _OPEN.search(source, pos)
        if m is None:
            tokens.append(Token("text", pos, n))
            break
        if m.start() > pos:
            tokens.append(Token("text", pos, m.start()))
        start = m.start()
        raw = _RAW_BEGIN.match(source, start) if m.group() == "{%" else None
        if raw is not None:
            pos = _raw(source, raw, tokens)
            continue
        opener = m.group()
        mod = source[start + 2:start + 3]
        open_end = start + 3 if mod in ("-", "+") else start + 2
        plus = mod == "+"
        if opener == "{#":
            c = _COMMENT_END.search(source, open_end)
            close_start, end = (c.start(), c.end()) if c else (n, n)
            plus = plus or (c is not None and c.group().startswith("+"))
            tokens.append(Token("comment", start, end, open_end, close_start, plus))
        else:
            close_start, end = _tag_end(source, open_end, _CLOSERS[opener])
            plus = plus or (source.startswith("+", close_start) and opener == "{%")
            kind: Kind = "var" if opener == "{{" else "block"
            tokens.append(Token(kind, start, end, open_end, close_start, plus))
        pos = end
    return tokens


def _raw(source: str, begin: re.Match[str], tokens: list[Token]) -> int:
    """A raw block: its begin tag, the content exactly as written, its end tag."""
    start, n = begin.start(), len(source)
    open_end = start + 2 + len(begin.group(1))
    close_start = begin.end() - len(begin.group(2))
    tokens.append(Token("raw_begin", start, begin.end(), open_end, close_start,
                        begin.group(1) == "+"))
    end = _RAW_END.search(source, begin.end())
    if end is None:  # unterminated: Jinja reports "missing end of raw directive"
        tokens.append(Token("raw_text", begin.end(), n))
        return n
    if end.start() > begin.end():
        tokens.append(Token("raw_text", begin.end(), end.start()))
    e_open = end.start() + 2 + len(end.group(1))
    tokens.append(Token("raw_end", end.start(), end.end(), e_open, end.end() - len(end.group(2)),
                        "+" in (end.group(1), end.group(2)[:1])))
    return end.end()


def _tag_end(source: str, pos: int, closers: tuple[str, ...]) -> tuple[int, int]:
    """(closing delimiter offset, end offset) of a ``{{``/``{%`` tag starting its body at pos.

    As Jinja's lexer: string literals are skipped whole, and a closer only counts while no
    bracket opened inside the tag is still open.
    """
    depth, n = 0, len(source)
    while pos < n:
        run = _PLAIN.match(source, pos)  # characters that neither close, quote nor bracket
        if run is not None:
            pos = run.end()
            if pos >= n:
                break
        if depth == 0:
            for closer in closers:
                if source.startswith(closer, pos):
                    return pos, pos + len(closer)
        ch = source[pos]
        if ch in "'\"":
            q = _QUOTED.match(source, pos)
            if q is not None:
                pos = q.end()
                continue
        elif ch in _OPENERS:
            depth += 1
        elif ch in _CLOSING and depth:
            depth -= 1
        pos += 1
    return n, n


def has_delimiter(text: str) -> bool:
    """Whether literal text would be read by Jinja as (the start of) a tag."""
    return _OPEN.search(text) is not None
