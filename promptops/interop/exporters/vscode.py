"""IR -> a VS Code / Copilot prompt file, ``.github/prompts/<name>.prompt.md``.

VS Code replaces ``${input:name}`` (asking the user, the text after a second ``:`` is the
hint it shows) and its editor variables, and sends the rest verbatim. So a prompt exports
exactly when it is one user message of text and plain argument references, every argument a
string without a non-empty default (VS Code always asks, and has no defaults), and no text
that VS Code would read as a variable (there is no escape for ``${...}``). An argument the
VS Code importer made from an editor variable goes back to that variable.

A template that is more than substitution (``{% if %}``, ``{% for %}``, a filter) is not
exported - VS Code would send the Jinja verbatim - and the report says why; comments are
dropped and includes inlined (see :mod:`._plain`). A package file a message embeds is
written under ``.github/promptops/`` and referenced with a relative Markdown link, which VS
Code attaches as context (a named loss: not an embedded resource message).
Documented grammar: https://code.visualstudio.com/docs/copilot/customization/prompt-files
(``${input:variableName}``, ``${input:variableName:placeholder}``, Markdown links).

Frontmatter: ``description``, ``mode``/``agent`` (from metadata), ``tools`` (names),
``model`` (id); other metadata keys travel too, as VS Code ignores keys it does not know.
"""

from __future__ import annotations

import re

from promptops.interop import ir
from promptops.interop.exporters import _plain
from promptops.interop.importers.vscode import EDITOR_VARIABLES

_VARIABLE = re.compile(r"\$\{(input:[^}:]+(?::[^}]*)?|[A-Za-z]+)\}")
FOLDER = ".github/prompts"
FILES = ".github/promptops"  # package files the prompts reference, by package path
_UNNAMABLE = re.compile(r"[:}]|^$")
_LINKABLE = re.compile(r"[A-Za-z0-9_.\-/]+\Z")


def export(prompt: ir.IRPrompt) -> tuple[dict[str, str | bytes], list[ir.Loss]]:
    found, why, losses = _plain.single_pieces(prompt, "VS Code")
    if found is None:
        return {}, [*losses, ir.Loss("template", f"not exported: VS Code substitutes "
                                     f"${{input:...}} variables only, and this prompt uses {why}")]
    body: list[str] = []
    files: dict[str, str | bytes] = {}
    args = {a.name: a for a in prompt.arguments}
    unnamable = sorted({p.name for p in found if isinstance(p, _plain.Ref) and
                        _UNNAMABLE.search(p.name.removeprefix("input:"))})
    if unnamable:
        return {}, [*losses, ir.Loss("template", f"not exported: the argument "
                                     f"{unnamable[0]!r} cannot be named in ${{input:...}} "
                                     "(a ':' or '}' would end the name)")]
    for piece in found:
        if isinstance(piece, str):
            for m in _VARIABLE.finditer(piece):
                losses.append(ir.Loss(m.group(), "VS Code would replace this text; it has "
                                      "no way to write it literally"))
            body.append(piece)
        elif isinstance(piece, ir.PackageFile):
            body.append(_reference(piece, files, losses))
        elif isinstance(piece, _plain.Ref) and piece.word is None:
            body.append(_variable(args.get(piece.name), piece.name))
        else:
            losses.append(ir.Loss(f"{piece.name} (a Claude Code form)", "VS Code has no "
                                  "word splitting or automatic arguments line"))
    for arg in prompt.arguments:
        if arg.type != "string":
            losses.append(ir.Loss(arg.name, f"VS Code inputs are text; {arg.type} is not"))
        if arg.has_default and arg.default not in ("", None):
            losses.append(ir.Loss(arg.name, f"VS Code has no defaults (default "
                                  f"{arg.default!r}): it always asks"))
    front: dict[str, ir.Json] = {}
    if prompt.description:
        front["description"] = prompt.description
    front.update({k: v for k, v in prompt.metadata.items()
                  if isinstance(k, str) and not k.startswith(("prompty.", "dotprompt."))})
    if prompt.tools:
        front["tools"] = [t.name for t in prompt.tools]
    text = _plain.markdown_file(prompt, front, "".join(body), "VS Code prompt", losses)
    return {f"{FOLDER}/{prompt.name}.prompt.md": text, **files}, losses


def _reference(part: ir.PackageFile, files: dict[str, str | bytes],
               losses: list[ir.Loss]) -> str:
    """A package file as VS Code references one: a relative Markdown link from the prompt
    file, which VS Code attaches as context; the file is written beside the prompts."""
    if not _LINKABLE.match(part.path):
        losses.append(ir.Loss(f"{part.kind} {part.path}", "its name cannot be written as a "
                              "Markdown link; the message is not written"))
        return ""
    files[f"{FILES}/{part.path}"] = part.data
    losses.append(ir.Loss(f"{part.kind} {part.path}", f"written to {FILES}/{part.path} and "
                          "referenced by a Markdown link: VS Code attaches the file as context "
                          "instead of sending it as an embedded resource message"))
    return f"[{part.path.rsplit('/', 1)[-1]}](../promptops/{part.path})"


def _variable(arg: ir.Argument | None, name: str) -> str:
    desc = arg.description if arg else None
    if name in EDITOR_VARIABLES and desc and desc.endswith(f"(${{{name}}}).") :
        return f"${{{name}}}"
    if name.startswith("input:"):
        name = name[len("input:"):]
    hint = desc if desc and desc != f"VS Code asks for {name}." and "}" not in desc else None
    return f"${{input:{name}:{hint}}}" if hint else f"${{input:{name}}}"
