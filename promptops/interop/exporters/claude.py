"""IR -> a Claude Code custom command, ``.claude/commands/<name>.md``.

Claude Code has one argument, the text typed after the command: ``$ARGUMENTS``, its words
``$1``..``$9``, and - when the body uses neither - the line ``ARGUMENTS: <text>`` appended.
So a prompt exports exactly when it is one user message of text and references to at most one
string argument, whose default is empty (a command typed without arguments gives ``""``).
With several arguments they become the words ``$1``, ``$2``... - a loss, since a value with a
space becomes two words. Text Claude Code would act on cannot be written literally:
``$ARGUMENTS``/``$1`` would be substituted, a ``!`cmd``` line would run, an ``@path`` would be
read - each is a loss.

Frontmatter: ``description``, ``allowed-tools`` (comma-separated names), ``argument-hint``
(from metadata, else the argument names), ``model`` (id).
"""

from __future__ import annotations

import re

from promptops.interop import ir
from promptops.interop.exporters import _plain
from promptops.interop.importers.claude import file_references

_SUBSTITUTED = re.compile(r"\$(ARGUMENTS|[1-9])")
_BANG = re.compile(r"!`[^`\n]*`")
FOLDER = ".claude/commands"


def export(prompt: ir.IRPrompt) -> tuple[dict[str, str], list[ir.Loss]]:
    template, losses = _plain.single_text(prompt, "Claude Code")
    pieces, why = _plain.pieces(template, "jinja")
    used = [a for a in prompt.arguments]
    positional = len(used) > 1
    if positional:
        losses.append(ir.Loss("arguments", f"Claude Code has one argument text; {len(used)} "
                              "arguments become its words $1.., so a value with a space "
                              "splits"))
    body: list[str] = []
    if pieces is None:
        losses.append(ir.Loss("template", f"Claude Code substitutes $ARGUMENTS only: {why}; "
                              "the Jinja is written as text"))
        body.append(template)
    else:
        names = [a.name for a in used]
        for piece in pieces:
            if isinstance(piece, str):
                losses += [ir.Loss(m.group(), "Claude Code would substitute this text")
                           for m in _SUBSTITUTED.finditer(piece)]
                body.append(piece)
            elif isinstance(piece, _plain.Ref) and piece.word is not None:
                body.append(f"${piece.word + 1}")
            elif isinstance(piece, _plain.Ref):
                body.append(f"${names.index(piece.name) + 1}" if positional and
                            piece.name in names else "$ARGUMENTS")
            # Appended: Claude Code appends the arguments line itself when nothing is used.
        if not any(isinstance(p, _plain.Ref) for p in pieces) and used and \
                not any(isinstance(p, _plain.Appended) for p in pieces):
            losses.append(ir.Loss("arguments", "the template does not use its arguments, but "
                                  "Claude Code appends them as an ARGUMENTS: line"))
    for arg in used:
        if arg.type != "string":
            losses.append(ir.Loss(arg.name, f"Claude Code arguments are text; {arg.type} is not"))
        if arg.has_default and arg.default not in ("", None):
            losses.append(ir.Loss(arg.name, f"Claude Code has no defaults (default "
                                  f"{arg.default!r}): a missing argument is empty"))
    losses += _acted_on("".join(body))
    front: dict[str, ir.Json] = {}
    if prompt.description:
        front["description"] = prompt.description
    if prompt.tools:
        front["allowed-tools"] = ", ".join(t.name for t in prompt.tools)
    hint = prompt.metadata.get("argument-hint")
    if hint is None and used and (positional or used[0].name != "ARGUMENTS"):
        hint = " ".join(f"[{a.name}]" for a in used)
    if hint is not None:
        front["argument-hint"] = hint
    text = _plain.markdown_file(prompt, front, "".join(body), "Claude Code command", losses)
    return {f"{FOLDER}/{prompt.name}.md": text}, losses


def _acted_on(body: str) -> list[ir.Loss]:
    """What Claude Code does with the written body besides substituting."""
    out = [ir.Loss(m.group(), "Claude Code would run this command") for m in
           _BANG.finditer(body)]
    out += [ir.Loss(m.group(), "Claude Code would read this file into the prompt") for m in
            file_references(body)]
    return out
