"""Mustache (as Prompty and LangChain run it) to Jinja in ``jinja`` whitespace mode, exactly.

Prompty (``template: mustache``) and LangChain (``template_format="mustache"``) both render
Mustache with a port of chevron, so one translation serves both. Why it is built this way:

* **Whitespace**: chevron removes a *standalone* line - one holding only a section, inverted
  section, end, comment or partial tag and spaces - with its newline, by its own rule (the
  left side may be any whitespace since the last newline, or follow another standalone tag;
  only spaces are stripped on the left; a partial keeps them). That rule is applied here,
  while tokenizing, so the Jinja holds exactly the text chevron outputs and its tags sit
  inline: in ``jinja`` mode (Jinja's defaults) an inline tag changes no whitespace.
* **Names** resolve through a scope stack: the innermost section's item first, then each
  enclosing one, then the arguments; a dotted name must resolve whole in one scope (a dict
  key, or a digit index into a list), else the next scope is tried, else it is empty. Each
  lookup is written as that chain of conditional expressions, with ``is mapping`` and ``in``
  so that a dict's own methods (``items``, ``keys``) are never found in place of a key.
* **Values**: a missing or falsy value prints empty except ``0`` and ``False``; anything else
  prints as Python's ``str()`` (both engines are Python); ``{{x}}`` escapes ``& " < >`` (not
  ``'``, which Jinja's ``escape`` would), ``{{{x}}}`` and ``{{&x}}`` do not.
* **Sections**: ``{{#x}}`` repeats over a list (each item the new scope), renders once with a
  truthy value as the scope, and not at all for a falsy one; ``{{^x}}`` renders when ``x`` is
  falsy or an empty list, with ``True`` as its scope; ``{{.}}`` on a ``True`` scope prints
  the scope below it (chevron's own quirk, kept).
* **Partials** render empty: neither engine is given partials (Prompty and LangChain's
  formatter pass none), so ``{{> name}}`` outputs nothing - exactly what is written here.

Set-delimiter tags (``{{=<% %>=}}``) and lambdas are not translated: :class:`MustacheError`
names them and the importer reports the loss.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from promptops.interop.jinja_build import literal, string, variable


class MustacheError(ValueError):
    """A template the translation does not handle (or chevron refuses), with its line."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


_KINDS = {"!": "comment", "#": "section", "^": "inverted", "/": "end", ">": "partial",
          "=": "delimiter", "{": "raw", "&": "raw"}
_STANDALONE = ("comment", "section", "inverted", "end", "partial", "delimiter")


@dataclass
class _Token:
    kind: str  # "text" or a tag kind: variable, raw, comment, section, inverted, end, partial
    value: str
    line: int


def tokenize(template: str) -> list[_Token]:
    """chevron's tokens, with its standalone-line rule applied to the text around them."""
    out: list[_Token] = []
    pos, standalone, open_sections = 0, True, []
    while True:
        start = template.find("{{", pos)
        text = template[pos:] if start < 0 else template[pos:start]
        line = template.count("\n", 0, pos) + 1
        if start < 0:
            if text:
                out.append(_Token("text", text, line))
            break
        tag_line = template.count("\n", 0, start) + 1
        if "\n" in text or standalone:  # the left side of a standalone tag
            padding = text.split("\n")[-1]
            standalone = padding.isspace() or padding == ""
        else:
            standalone = False
        kind, key, end = _tag(template, start + 2, tag_line)
        if kind == "delimiter":
            raise MustacheError("a set-delimiter tag ({{=...=}}) is not translated", tag_line)
        if kind in ("section", "inverted"):
            open_sections.append(key)
        elif kind == "end" and (not open_sections or open_sections.pop() != key):
            raise MustacheError(f"{{{{/{key}}}}} closes no open section of that name "
                                    "(the engine refuses the template)", tag_line)
        rest = template[end:]
        if standalone and kind in _STANDALONE:
            first = rest.split("\n", 1)[0]
            standalone = first.isspace() or not first
        else:
            standalone = False
        if standalone:
            newline = template.find("\n", end)
            if newline >= 0:  # with no newline to the right, chevron keeps the rest as it is
                end = newline + 1
            if kind != "partial":
                text = text.rstrip(" ")
        if text:
            out.append(_Token("text", text, line))
        if kind != "comment":
            out.append(_Token(kind, key, tag_line))
        pos = end
    if open_sections:
        raise MustacheError(f"{{{{#{open_sections[-1]}}}}} is never closed (the engine "
                            "refuses the template)", template.count("\n") + 1)
    return out


def _tag(template: str, at: int, line: int) -> tuple[str, str, int]:
    """(kind, key, end) of the tag whose ``{{`` ends at ``at``."""
    close = template.find("}}", at)
    if close < 0:
        raise MustacheError("unclosed tag (the engine refuses the template)", line)
    inner = template[at:close]
    kind = _KINDS.get(inner.lstrip()[:1], "variable") if inner.strip() else "variable"
    key = inner.strip()
    if kind != "variable":
        key = key[1:].strip()
    end = close + 2
    if kind == "raw" and inner.lstrip().startswith("{"):
        if template[end:end + 1] == "}":  # {{{x}}}: the third brace
            end += 1
        else:
            kind = "variable"  # what chevron does with {{{x}} ("no escape?" without its brace)
            key = inner.strip()
    if kind == "delimiter" and key.endswith("="):
        key = key[:-1].strip()
    return kind, key, end


# --------------------------------------------------------------------------- translation

_PRINTED = "({0} if {0} is number else ({0} or ''))"  # 0 and False print; other falsy: ""
_ESCAPE = (" | replace('&', '&amp;') | replace('\"', '&quot;') | replace('<', '&lt;')"
           " | replace('>', '&gt;')")


@dataclass
class Translation:
    """The Jinja source and what it reads at the top level (the arguments)."""

    source: str
    names: list[str] = field(default_factory=list)  # every argument a lookup may reach
    top: list[str] = field(default_factory=list)  # the ones read outside any section
    iterated: set[str] = field(default_factory=set)  # top-level section keys
    notes: list[str] = field(default_factory=list)


def to_jinja(template: str) -> Translation:
    """The Jinja (``jinja`` whitespace mode) that renders what chevron renders."""
    tokens = tokenize(template)
    out = Translation("")
    parts: list[str] = []
    scopes: list[str] = []  # innermost first: the Jinja names of the section items
    opened: list[str] = []  # the closing tags of the open sections
    counter = 0
    for tok in tokens:
        if tok.kind == "text":
            parts.append(literal(tok.value))
        elif tok.kind in ("variable", "raw"):
            value = _lookup(tok.value, scopes, out)
            printed = "{% with _v = " + value + " %}{{ " + _PRINTED.format("_v") + \
                " | string" + (_ESCAPE if tok.kind == "variable" else "") + \
                " }}{% endwith %}"
            parts.append(printed)
        elif tok.kind == "section":
            counter += 1
            s, i = f"_s{counter}", f"_i{counter}"
            value = _lookup(tok.value, scopes, out)
            if not scopes and "." not in tok.value:
                out.iterated.add(tok.value)
            parts.append("{% with " + s + " = " + value + " %}{% for " + i + " in (" + s +
                         " if (" + s + " is sequence and " + s + " is not string and " + s +
                         " is not mapping) else ([" + s + "] if " + s + " else [])) %}")
            opened.append("{% endfor %}{% endwith %}")
            scopes.insert(0, i)
        elif tok.kind == "inverted":
            value = _lookup(tok.value, scopes, out)
            parts.append("{% if not " + value + " %}")
            opened.append("{% endif %}")
            scopes.insert(0, "true")  # chevron pushes `not value` (True) as the scope
        elif tok.kind == "end":
            parts.append(opened.pop())
            scopes.pop(0)
        elif tok.kind == "partial":
            out.notes.append(f"line {tok.line}: {{{{> {tok.value}}}}} renders empty: the "
                             "engine is given no partials")
    out.source = "".join(parts)
    return out


def _lookup(key: str, scopes: list[str], out: Translation) -> str:
    """The Jinja expression of ``key`` resolved as chevron resolves it (empty if nowhere)."""
    items = scopes
    if key == ".":  # a True scope (an inverted section's, {{#flag}}'s) prints the one below
        if not items:
            return "args"
        below = items[1] if len(items) > 1 else "args"
        return f"({below} if {items[0]} is sameas true else {items[0]})"
    keys = key.split(".")
    chain: list[tuple[str, str]] = []
    for scope in items:
        chain.append(_path(scope, keys))
    top = keys[0]
    if top not in out.names:
        out.names.append(top)
    if not items and top not in out.top:
        out.top.append(top)
    base = variable(top)
    cond, expr = _path(base, keys[1:])
    chain.append((f"{base} is defined" + (f" and {cond}" if cond != "true" else ""), expr))
    result = "''"
    for cond, expr in reversed(chain):
        result = f"({expr} if {cond} else {result})"
    return result


def _path(base: str, keys: list[str]) -> tuple[str, str]:
    """(condition, expression) that ``keys`` resolve in ``base``, step by step."""
    conds: list[str] = []
    expr = base
    for k in keys:
        if k.isdigit():
            conds.append(f"({expr} is sequence and {expr} is not string and {expr} is not "
                         f"mapping and ({expr} | length) > {k})")
            expr = f"{expr}[{k}]"
        else:
            conds.append(f"({expr} is mapping and {string(k)} in {expr})")
            expr = f"{expr}[{string(k)}]"
    return (" and ".join(conds) or "true"), expr
