"""IR -> a Claude Code custom command, ``.claude/commands/<name>.md``.

Claude Code has one argument, the text typed after the command: ``$ARGUMENTS``, its words
(split as a shell splits them, quotes grouping) ``$ARGUMENTS[0]``, ``$ARGUMENTS[1]``... -
**0-based** in the current documentation (https://code.claude.com/docs/en/skills, "Pass
arguments to skills": ``$N`` is shorthand for ``$ARGUMENTS[N]``, so ``$1`` is the *second*
word; commands and skills substitute alike) - and, when the body uses none of them, the line
``ARGUMENTS: <text>`` appended. Older versions documented ``$1`` as the first word, so a word
is written in the explicit ``$ARGUMENTS[N]`` form, never as ``$N``, and a prompt that needs
words carries a loss saying so. So a prompt exports exactly when it is one user message of
text and references to at most one string argument, whose default is empty (a command typed
without arguments gives ``""``). With several arguments they become the words
``$ARGUMENTS[0]``, ``$ARGUMENTS[1]``... in declared order - a loss, since a value with a space
must be typed in quotes. Text Claude Code would act on cannot be written literally:
``$ARGUMENTS``/``$0``..``$9`` would be substituted, a ``!`cmd``` line would run, an ``@path``
would be read - each is a loss.

A template that is more than substitution (``{% if %}``, ``{% for %}``, a filter) is not
exported - Claude Code would send the Jinja verbatim - and the report says why; comments are
dropped and includes inlined (see :mod:`._plain`). A package file a message embeds is
written under ``.claude/promptops/`` and referenced as ``@.claude/promptops/<path>`` (read
from the project folder, the output folder): a named loss, not an embedded resource.

Frontmatter: ``description``, ``allowed-tools`` (comma-separated names), ``argument-hint``
(from metadata, else the argument names), ``model`` (id).
"""

from __future__ import annotations

import re

from promptops.interop import ir
from promptops.interop.exporters import _plain
from promptops.interop.importers.claude import file_references

_SUBSTITUTED = re.compile(r"\$(ARGUMENTS(\[\d+\])?|[0-9])")
_BANG = re.compile(r"!`[^`\n]*`")
FOLDER = ".claude/commands"
FILES = ".claude/promptops"  # package files the commands reference (not under commands/,
# where every .md would become a command)
_REFERABLE = re.compile(r"[A-Za-z0-9_.\-/]+\Z")


def export(prompt: ir.IRPrompt) -> tuple[dict[str, str | bytes], list[ir.Loss]]:
    found, why, losses = _plain.single_pieces(prompt, "Claude Code")
    if found is None:
        return {}, [*losses, ir.Loss("template", f"not exported: Claude Code substitutes "
                                     f"$ARGUMENTS and its words only, and this prompt uses {why}")]
    used = list(prompt.arguments)
    positional = len(used) > 1
    if positional:
        losses.append(ir.Loss("arguments", f"Claude Code has one argument text; {len(used)} "
                              "arguments become its words $ARGUMENTS[0].., so a value with "
                              "a space must be typed in quotes"))
    body: list[str] = []
    literal: list[str] = []
    files: dict[str, str | bytes] = {}
    names = [a.name for a in used]
    words = False
    for piece in found:
        if isinstance(piece, str):
            losses += [ir.Loss(m.group(), "Claude Code would substitute this text")
                       for m in _SUBSTITUTED.finditer(piece)]
            body.append(piece)
            literal.append(piece)
        elif isinstance(piece, ir.PackageFile):
            body.append(_reference(piece, files, losses))
            literal.append(" ")
        elif isinstance(piece, _plain.Ref) and piece.word is not None:
            body.append(f"$ARGUMENTS[{piece.word}]")
            words = True
        elif isinstance(piece, _plain.Ref):
            body.append(f"$ARGUMENTS[{names.index(piece.name)}]" if positional and
                        piece.name in names else "$ARGUMENTS")
        # Appended: Claude Code appends the arguments line itself when nothing is used.
    if words:
        losses.append(ir.Loss("$ARGUMENTS[N]", "a word of the arguments, written in the "
                              "explicit 0-based form Claude Code documents now; versions that "
                              "predate it substituted only $ARGUMENTS and a 1-based $N"))
    losses += _argument_losses(found, used)
    losses += _acted_on("".join(literal))
    front = _front(prompt, used, positional=positional)
    text = _plain.markdown_file(prompt, front, "".join(body), "Claude Code command", losses)
    return {f"{FOLDER}/{prompt.name}.md": text, **files}, losses


def _argument_losses(found: list[_plain.Piece], used: list[ir.Argument]) -> list[ir.Loss]:
    """What Claude Code's one argument text cannot say about the arguments."""
    losses: list[ir.Loss] = []
    if not any(isinstance(p, _plain.Ref) for p in found) and used and \
            not any(isinstance(p, _plain.Appended) for p in found):
        losses.append(ir.Loss("arguments", "the template does not use its arguments, but "
                              "Claude Code appends them as an ARGUMENTS: line"))
    for arg in used:
        if arg.type != "string":
            losses.append(ir.Loss(arg.name, f"Claude Code arguments are text; {arg.type} is not"))
        if arg.has_default and arg.default not in ("", None):
            losses.append(ir.Loss(arg.name, f"Claude Code has no defaults (default "
                                  f"{arg.default!r}): a missing argument is empty"))
    return losses


def _front(prompt: ir.IRPrompt, used: list[ir.Argument], *,
           positional: bool) -> dict[str, ir.Json]:
    """The command file's frontmatter: description, allowed tools, argument hint."""
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
    return front


def _reference(part: ir.PackageFile, files: dict[str, str | bytes],
               losses: list[ir.Loss]) -> str:
    """A package file as Claude Code references one: ``@path`` from the project folder (the
    output folder), which Claude Code reads into the prompt; the file is written there."""
    if not _REFERABLE.match(part.path):
        losses.append(ir.Loss(f"{part.kind} {part.path}", "its name cannot be written as an "
                              "@ reference; the message is not written"))
        return ""
    files[f"{FILES}/{part.path}"] = part.data
    losses.append(ir.Loss(f"{part.kind} {part.path}", f"written to {FILES}/{part.path} and "
                          f"referenced as @{FILES}/{part.path}: Claude Code reads the file into "
                          "the prompt instead of sending it as an embedded resource message"))
    return f"@{FILES}/{part.path}"


def _acted_on(body: str) -> list[ir.Loss]:
    """What Claude Code does with the written body besides substituting."""
    out = [ir.Loss(m.group(), "Claude Code would run this command") for m in
           _BANG.finditer(body)]
    out += [ir.Loss(m.group(), "Claude Code would read this file into the prompt") for m in
            file_references(body)]
    return out
