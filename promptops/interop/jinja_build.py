"""Writing Jinja source that renders literal text exactly, whatever the text holds.

Importers turn Handlebars, f-strings, Nunjucks and plain text into Jinja. The text between
the variables is the author's and must come out byte for byte, so every ``{{``, ``{%`` and
``{#`` in it is escaped (a ``{% raw %}`` run when it closes on the same line, as
``{{question}}`` in a Copilot file does, else ``{{ '{' }}``), and so is a ``{`` that a tag
written right after it would otherwise join (``{`` + ``{{ x }}``). A carriage return is
escaped too: Jinja normalises newlines in template text, but not in a string literal.
"""

from __future__ import annotations

import keyword
import re

from promptops.sandbox.jinja_source import has_delimiter

# Words Jinja reads as constants or operators, or binds itself (loop, self, caller...), and
# ``args``, which the IR binds to all arguments: such an argument is read as args[...].
_JINJA_WORDS = frozenset({
    "true", "false", "none", "True", "False", "None", "and", "or", "not", "in", "is", "if",
    "else", "loop", "self", "caller", "varargs", "kwargs", "args"})
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_DELIM = re.compile(r"\{[{%#]")
_CLOSER = {"{{": "}}", "{%": "%}", "{#": "#}"}
_STRING_ESCAPES = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def string(value: str) -> str:
    """A Jinja string literal whose value is exactly ``value``."""
    out = []
    for ch in value:
        if ch in _STRING_ESCAPES:
            out.append(_STRING_ESCAPES[ch])
        elif ord(ch) < 0x20 or ch == "\x7f":
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return "'" + "".join(out) + "'"


def is_plain_name(name: str) -> bool:
    """Whether a template may read argument ``name`` as a bare Jinja name."""
    return bool(_IDENT.match(name)) and name not in _JINJA_WORDS and not keyword.iskeyword(name)


def variable(name: str) -> str:
    """The Jinja expression that reads argument ``name`` (``args["..."]`` when not a name)."""
    if is_plain_name(name):
        return name
    return "args[" + string(name) + "]"


def literal(text: str, before_tag: bool = False) -> str:
    """Jinja source that outputs ``text`` exactly; ``before_tag`` when a tag follows directly."""
    if "\r" in text:  # each piece but the last is followed by the escaped "\r" tag
        pieces = text.split("\r")
        return "{{ '\\r' }}".join(literal(piece, before_tag=(i < len(pieces) - 1 or before_tag))
                                  for i, piece in enumerate(pieces))
    out: list[str] = []
    pos = 0
    found: dict[str, int] = {}  # the next occurrence of each closer (searched once: linear)
    eol = -1
    while True:
        m = _DELIM.search(text, pos)
        if m is None:
            break
        start = m.start()
        out.append(text[pos:start])
        if eol < start:
            eol = text.find("\n", start)
            eol = len(text) if eol < 0 else eol
        closer = _CLOSER[m.group()]
        if found.get(closer, -1) < start + 2 and found.get(closer) != len(text):
            at = text.find(closer, start + 2)
            found[closer] = len(text) if at < 0 else at
        close = found[closer] if found[closer] < eol else -1
        if close >= 0 and "endraw" not in text[start:close + 2]:
            out.append("{% raw %}" + text[start:close + 2] + "{% endraw %}")
            pos = close + 2
        else:
            out.append("{{ '{' }}")
            pos = start + 1
    rest = text[pos:]
    if before_tag and rest.endswith("{"):
        rest = rest[:-1] + "{{ '{' }}"
    out.append(rest)
    return "".join(out)


class Builder:
    """Jinja source assembled from literal text and tags, escaped at the joins."""

    def __init__(self) -> None:
        self._pieces: list[tuple[bool, str]] = []  # (is_tag, text)

    def text(self, text: str) -> Builder:
        if text:
            if self._pieces and not self._pieces[-1][0]:
                self._pieces[-1] = (False, self._pieces[-1][1] + text)
            else:
                self._pieces.append((False, text))
        return self

    def tag(self, source: str) -> Builder:
        self._pieces.append((True, source))
        return self

    def output(self, expression: str) -> Builder:
        return self.tag("{{ " + expression + " }}")

    def empty(self) -> bool:
        return not self._pieces

    def source(self) -> str:
        out = []
        for i, (is_tag, text) in enumerate(self._pieces):
            if is_tag:
                out.append(text)
            else:
                follows = i + 1 < len(self._pieces) and self._pieces[i + 1][0]
                out.append(literal(text, before_tag=follows))
        return "".join(out)


def needs_escape(text: str) -> bool:
    return has_delimiter(text) or "\r" in text
