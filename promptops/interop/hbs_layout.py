"""The layout half of the Handlebars-to-Jinja translation: chunks of output and the lines
they make.

The translator (:mod:`promptops.interop.hbs_to_jinja`) decides what each piece of a
template means; this module decides how the pieces are written so that our standalone-line
rule removes exactly the blanks Handlebars' rule removed (the "restored" blanks), and
where the two rules disagree, bakes the removal in. Kept apart because it is the part a
whitespace bug lives in, and it is tested on its own through the Dotprompt corpus.
"""

from __future__ import annotations

from dataclasses import dataclass

from promptops.interop.ir import BLANK
from promptops.interop.jinja_build import literal
from promptops.sandbox.whitespace import _SPACE

_JS_SPACE = BLANK


def js_blank(text: str) -> bool:
    """``text.trim() === ''`` in JavaScript."""
    return all(ch in _JS_SPACE for ch in text)


def js_trim(text: str) -> str:
    start, end = 0, len(text)
    while start < end and text[start] in _JS_SPACE:
        start += 1
    while end > start and text[end - 1] in _JS_SPACE:
        end -= 1
    return text[start:end]


# --------------------------------------------------------------------------- chunks


@dataclass
class Chunk:
    """A piece of translated output: text, a Jinja tag, or a Dotprompt marker."""

    kind: str  # "text" | "tag" | "role" | "history" | "media"
    text: str = ""
    restored: bool = False  # text Handlebars' standalone rule removed, put back for layout
    open: str = ""  # a tag's opening delimiter ("{%", "{{", "{#"), before any "+"
    blockish: bool = False
    plus: bool = False
    depth: int = 0  # how many blocks enclose it (markers must be at depth 0)
    line: int = 0
    payload: tuple[str, ...] = ()  # role name; media (url template, content type template)

    def source(self) -> str:
        if self.kind != "tag":
            return self.text
        if self.plus:
            return self.open + "+" + self.text[len(self.open):]
        return self.text


def assemble(chunks: list[Chunk]) -> str:  # complexity: two whitespace rules reconciled
    """Jinja source (standalone mode) that outputs what the chunks say, laid out as written.

    Complexity 37: one fixed-point pass that reconciles Handlebars' standalone rule with
    ours, line by line, with a case per disagreement the Dotprompt corpus has shown (two
    block tags on one line, a tag beside a role marker, a partial's edge); each case is a
    branch so it can be read against handlebars.js' own ``WhitespaceControl``.

    Restored text is kept only on lines our standalone rule removes exactly; elsewhere it is
    dropped (Handlebars removed it) and a line our rule would remove but Handlebars kept gets
    a ``+`` on its first block tag.
    """
    live = [c for c in chunks if c.kind in ("text", "tag")]
    while True:
        changed = False
        for line in _lines(live):
            texts = [(c, t) for c, t in line if c.kind == "text"]
            tags = [c for c, _ in line if c.kind == "tag"]
            ours = bool(tags) and all(c.blockish and not c.plus for c in tags) and all(
                _blank(t, c.restored) for c, t in texts)
            restored = [c for c, _ in texts if c.restored]
            if ours and all(c.restored for c, _ in texts):
                continue
            if ours:
                next(c for c in tags if c.blockish).plus = True
                changed = True
            if restored:
                for c in restored:
                    c.kind = "dropped"
                changed = True
        live = [c for c in live if c.kind in ("text", "tag")]
        if not changed:
            break
    merged: list[Chunk] = []  # escaping must see a literal "{" + "{{" as one piece of text
    for c in live:
        if c.kind == "text" and not c.restored and merged and merged[-1].kind == "text" \
                and not merged[-1].restored:
            merged[-1] = Chunk("text", merged[-1].text + c.text, line=merged[-1].line)
        else:
            merged.append(c)
    live = merged
    out: list[str] = []
    for i, c in enumerate(live):
        if c.kind == "tag":
            out.append(c.source())
        elif c.restored:
            out.append(c.text)
        else:
            follows = i + 1 < len(live) and live[i + 1].kind == "tag"
            out.append(literal(c.text, before_tag=follows))
    return "".join(out)


def _blank(text: str, restored: bool) -> bool:
    body = text[:-2] if text.endswith("\r\n") else text[:-1] if text.endswith("\n") else text
    if not restored and "\r" in text:  # escaped as {{ '\r' }}: an expression on the line
        return False
    return _SPACE.issuperset(body)


def _lines(chunks: list[Chunk]) -> list[list[tuple[Chunk, str]]]:
    """Chunks cut into lines; a text chunk that spans lines is cut at its newlines.

    A chunk spanning lines is split for the analysis only by index: if any piece must be
    dropped the whole restored chunk goes (restored text is blanks plus at most one newline,
    so it never spans more than one line ending).
    """
    lines: list[list[tuple[Chunk, str]]] = [[]]
    for c in chunks:
        if c.kind != "text":
            lines[-1].append((c, c.text))
            continue
        pieces = c.text.split("\n")
        for i, piece in enumerate(pieces):
            last = i == len(pieces) - 1
            if piece or not last:
                lines[-1].append((c, piece if last else piece + "\n"))
            if not last:
                lines.append([])
    return [ln for ln in lines if ln]
