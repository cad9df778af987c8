"""Nunjucks (as promptfoo configures it) to Jinja: the same syntax, where it means the same.

Nunjucks is a port of Jinja, so most templates are Jinja already; what differs is what makes
a naive copy wrong. Nunjucks keeps ``\\r`` in text (Jinja normalises newlines), so a carriage
return is escaped; ``{% verbatim %}`` is Jinja's ``{% raw %}``; expressions are JavaScript-ish:
``x.length`` is ``x | length``, ``===``/``!==``/``&&``/``||``/``!`` are ``==``/``!=``/``and``/
``or``/``not``. Filters are kept only where Jinja's filter of that name does the same for text
(the list below); any other filter, and regular-expression literals, are losses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from jinja2.filters import FILTERS as DEFAULT_FILTERS

from promptops.sandbox.jinja_source import tokenize

# Filters whose Jinja namesake renders a string argument the same as Nunjucks'.
SAME_FILTERS = frozenset({"safe", "escape", "e", "trim", "upper", "lower", "length", "join",
                          "default", "d", "first", "last", "replace", "capitalize", "list",
                          "string", "int", "float", "abs", "reverse"})
_STRING = re.compile(r"""'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*\"""", re.S)
_LENGTH = re.compile(r"((?:[A-Za-z_]\w*)(?:\.[A-Za-z_]\w*|\[[^\[\]]*\])*)\.length\b(?!\s*\()")
_FILTER = re.compile(r"\|\s*([A-Za-z_]\w*)")
_OPS = [(re.compile(r"===|!=="), lambda m: "==" if m.group() == "===" else "!="),
        (re.compile(r"&&"), lambda m: " and "), (re.compile(r"\|\|"), lambda m: " or "),
        (re.compile(r"!(?!=)"), lambda m: " not ")]
_REGEX_LITERAL = re.compile(r"(?<![\w)\]])r/")


@dataclass
class Translated:
    source: str
    losses: list[tuple[str, str]] = field(default_factory=list)  # (what, reason)


def expression(expr: str, losses: list[tuple[str, str]]) -> str:
    """A Nunjucks expression (the inside of a tag) as Jinja; string literals untouched."""
    expr = _without_custom_filters(expr, losses)
    out, pos = [], 0
    for m in _STRING.finditer(expr):
        out.append(_code(expr[pos:m.start()], losses))
        out.append(m.group())
        pos = m.end()
    out.append(_code(expr[pos:], losses))
    return "".join(out)


def _code(code: str, losses: list[tuple[str, str]]) -> str:
    if _REGEX_LITERAL.search(code):
        losses.append((code.strip(), "Nunjucks regular-expression literals have no Jinja "
                       "equivalent"))
    code = _LENGTH.sub(lambda m: f"({m.group(1)} | length)", code)
    for rx, repl in _OPS:
        code = rx.sub(repl, code)
    for m in _FILTER.finditer(code):
        if m.group(1) not in SAME_FILTERS and m.group(1) in JINJA_FILTERS:
            losses.append((f"| {m.group(1)}", "this Nunjucks filter is not known to render as "
                           "Jinja's of the same name"))
    return code


# Jinja's filters (what a kept filter name can mean in the imported template).
JINJA_FILTERS = frozenset(DEFAULT_FILTERS)
_CUSTOM_FILTER = re.compile(
    r"""\|\s*([A-Za-z_]\w*)(\s*\((?:[^()'"]|'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")*\))?""")


def _without_custom_filters(expr: str, losses: list[tuple[str, str]]) -> str:
    strings = [m.span() for m in _STRING.finditer(expr)]
    out, pos = [], 0
    for m in _CUSTOM_FILTER.finditer(expr):
        if any(a <= m.start() < b for a, b in strings):
            continue
        out.append(expr[pos:m.start()] + _drop_custom(m, losses))
        pos = m.end()
    return "".join(out) + expr[pos:]


def _drop_custom(m: re.Match[str], losses: list[tuple[str, str]]) -> str:
    """A filter neither Nunjucks nor Jinja has: promptfoo's config defines it (``nunjucksFilters``,
    JavaScript). Its code is not in the prompt file, so the import applies no filter there."""
    if m.group(1) in JINJA_FILTERS:
        return m.group(0)
    losses.append((f"| {m.group(1)}", "a custom Nunjucks filter (defined in JavaScript in the "
                   "promptfoo config, not in this file); the imported template prints the value "
                   "unfiltered"))
    return ""


def to_jinja(source: str) -> Translated:
    """The whole template, tag by tag; the layout is kept (whitespace mode ``jinja``)."""
    losses: list[tuple[str, str]] = []
    out: list[str] = []
    for tok in tokenize(source):
        text = source[tok.start:tok.end]
        if tok.kind in ("text", "raw_text"):
            if "\r" in text and tok.kind == "text":
                text = text.replace("\r", "{{ '\\r' }}")
            elif "\r" in text:
                text = text.replace("\r", "{% endraw %}{{ '\\r' }}{% raw %}")
            out.append(text)
        elif tok.kind in ("var", "block"):
            inner = source[tok.open_end:tok.close_start]
            head = source[tok.start:tok.open_end]
            tail = source[tok.close_start:tok.end]
            word = inner.split(None, 1)[0] if inner.strip() else ""
            if tok.kind == "block" and word in ("verbatim", "endverbatim"):
                inner = inner.replace(word, "raw" if word == "verbatim" else "endraw", 1)
            if tok.kind == "block" and word == "for" and re.match(
                    r"\s*for\s+\w+\s*,\s*\w+\s+in\s", inner):
                losses.append((f"{{%{inner}%}}", "Nunjucks unpacks an object's keys and "
                               "values; Jinja needs .items()"))
            out.append(head + expression(inner, losses) + tail)
        else:
            out.append(text)
    return Translated("".join(out), losses)
