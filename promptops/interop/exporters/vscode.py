"""IR -> a VS Code / Copilot prompt file, ``.github/prompts/<name>.prompt.md``.

VS Code replaces ``${input:name}`` (asking the user, the text after a second ``:`` is the
hint it shows) and its editor variables, and sends the rest verbatim. So a prompt exports
exactly when it is one user message of text and plain argument references, every argument a
string without a non-empty default (VS Code always asks, and has no defaults), and no text
that VS Code would read as a variable (there is no escape for ``${...}``). An argument the
VS Code importer made from an editor variable goes back to that variable.

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


def export(prompt: ir.IRPrompt) -> tuple[dict[str, str], list[ir.Loss]]:
    template, losses = _plain.single_text(prompt, "VS Code")
    pieces, why = _plain.pieces(template, "jinja")
    body: list[str] = []
    args = {a.name: a for a in prompt.arguments}
    if pieces is None:
        losses.append(ir.Loss("template", f"VS Code substitutes variables only: {why}; the "
                              "Jinja is written as text"))
        body.append(template)
    else:
        for piece in pieces:
            if isinstance(piece, str):
                for m in _VARIABLE.finditer(piece):
                    losses.append(ir.Loss(m.group(), "VS Code would replace this text; it has "
                                          "no way to write it literally"))
                body.append(piece)
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
    return {f"{FOLDER}/{prompt.name}.prompt.md": text}, losses


def _variable(arg: ir.Argument | None, name: str) -> str:
    desc = arg.description if arg else None
    if name in EDITOR_VARIABLES and desc and desc.endswith(f"(${{{name}}}).") :
        return f"${{{name}}}"
    if name.startswith("input:"):
        name = name[len("input:"):]
    hint = desc if desc and desc != f"VS Code asks for {name}." and "}" not in desc else None
    return f"${{input:{name}:{hint}}}" if hint else f"${{input:{name}}}"
