"""Reading an IR template as plain substitution: literal text and argument references only.

VS Code prompt files and Claude Code commands substitute variables and nothing else, so a
template exports to them exactly when, once its whitespace mode is applied, Jinja's own parse
of it is text and ``{{ name }}`` outputs - no tag, no filter, no expression. This module does
that reading on Jinja's syntax tree (never on the source text), and also recognises the two
forms the Claude importer writes (``$N`` words and the appended ``ARGUMENTS:`` line) so a
command survives import -> export unchanged. Comments are not in the tree (so never written),
``{{ 'literal' }}`` is its text, and ``{% include "path" %}`` of a package file is read in
place - these targets have no includes, so the included template's own pieces are inlined.
Anything else (``if``, ``for``, ``set``, a filter) cannot be substituted: the prompt is
refused with that reason rather than written with Jinja the tool would send verbatim.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from jinja2 import Environment, TemplateSyntaxError, nodes

from promptops.interop import ir
from promptops.interop.ir import JsonObject
from promptops.interop.yamltext import frontmatter
from promptops.sandbox.jinja_source import tokenize
from promptops.sandbox.whitespace import ENVIRONMENT_OPTIONS, WhitespaceMode, prepare

_ENV = Environment(**ENVIRONMENT_OPTIONS)


@dataclass(frozen=True)
class Ref:
    """``{{ name }}``, the value of an argument; with ``word``, Claude's ``$word+1``:
    ``{{ name.split()[word] | default('') }}``."""

    name: str
    word: int | None = None


@dataclass(frozen=True)
class Appended:
    """``{{ '\\n\\nARGUMENTS: ' ~ ARG if ARG else '' }}``: Claude's automatic arguments line."""

    name: str


Piece = str | Ref | Appended | ir.PackageFile
_TAGS = {"Assign": "set", "AssignBlock": "set", "CallBlock": "call", "FilterBlock": "filter",
         "FromImport": "from ... import", "Macro": "macro", "Scope": "with",
         "ExprStmt": "do"}
_MAX_DEPTH = 32  # includes within includes; the package loader already refuses a cycle


def pieces(template: str, mode: WhitespaceMode, includes: Mapping[str, str] | None = None,
           include_mode: WhitespaceMode = "jinja",
           depth: int = 0) -> tuple[list[Piece] | None, str]:
    """The template as literal text and references, or (None, why it is not that).

    ``includes`` holds the package files ``{% include %}`` can name (source in
    ``include_mode``); an include of one of them contributes that file's pieces.
    """
    try:
        ast = _ENV.parse(prepare(template, mode))
    except TemplateSyntaxError as e:
        return None, f"the template does not compile: {e.message}"
    out: list[Piece] = []
    for node in ast.body:
        if isinstance(node, nodes.Include):
            inner, why = _included(node, includes or {}, include_mode, depth)
            if inner is None:
                return None, why
            out += inner
            continue
        if not isinstance(node, nodes.Output):
            tag = _TAGS.get(type(node).__name__, type(node).__name__.lower())
            return None, f"{{% {tag} %}} logic (the target substitutes values, it runs no " \
                "template logic)"
        for child in node.nodes:
            if isinstance(child, nodes.TemplateData):
                out.append(child.data)
                continue
            if isinstance(child, nodes.Const) and isinstance(child.value, str):
                out.append(child.value)  # {{ 'text' }} outputs its text
                continue
            piece = _reference(child)
            if piece is None:
                return None, "an expression that is not a plain argument " \
                    f"({{{{ {_shown(child)} }}}}: a filter, a test or an operator)"
            out.append(piece)
    return merged(out), ""


def merged(found: list[Piece]) -> list[Piece]:
    """Adjacent literal pieces joined into one string."""
    out: list[Piece] = []
    for piece in found:
        if isinstance(piece, str) and out and isinstance(out[-1], str):
            out[-1] += piece
        elif piece != "":
            out.append(piece)
    return out


def _included(node: nodes.Include, includes: Mapping[str, str], mode: WhitespaceMode,
              depth: int) -> tuple[list[Piece] | None, str]:
    name = node.template.value if isinstance(node.template, nodes.Const) else None
    if not isinstance(name, str):
        return None, "an include whose name is not a string literal"
    if name not in includes:
        return ([], "") if node.ignore_missing else \
            (None, f"{{% include {name!r} %}}: the file is not in the package")
    if not node.with_context:
        return None, f"{{% include {name!r} without context %}}"
    if depth >= _MAX_DEPTH:
        return None, f"includes nested more than {_MAX_DEPTH} deep"
    inner, why = pieces(includes[name], mode, includes, mode, depth + 1)
    return inner, (f"in {name}: {why}" if inner is None else "")


def _shown(node: nodes.Node) -> str:
    kind = type(node).__name__
    if isinstance(node, nodes.Filter):
        return f"... | {node.name}"
    if isinstance(node, nodes.Test):
        return f"... is {node.name}"
    return kind.lower()


def _reference(node: nodes.Node) -> Piece | None:
    name = argument(node)
    if name is not None:
        return Ref(name)
    if isinstance(node, nodes.Filter) and node.name == "default" and len(node.args) == 1 and \
            isinstance(node.args[0], nodes.Const) and node.args[0].value == "" and \
            isinstance(node.node, nodes.Getitem) and isinstance(node.node.arg, nodes.Const) and \
            isinstance(node.node.arg.value, int):
        call = node.node.node
        if isinstance(call, nodes.Call) and not call.args and isinstance(call.node, nodes.Getattr) \
                and call.node.attr == "split":
            name = argument(call.node.node)
            if name is not None:
                return Ref(name, node.node.arg.value)
    if isinstance(node, nodes.CondExpr) and isinstance(node.expr2, nodes.Const) and \
            node.expr2.value == "" and isinstance(node.expr1, nodes.Concat):
        test = argument(node.test)
        parts = node.expr1.nodes
        if test is not None and len(parts) == 2 and isinstance(parts[0], nodes.Const) and \
                parts[0].value == f"\n\n{test}: " and argument(parts[1]) == test:
            return Appended(test)
    return None


def argument(node: nodes.Node) -> str | None:
    """The argument a node reads: ``name`` or ``args["name"]``, else None."""
    if isinstance(node, nodes.Name) and node.ctx == "load" and node.name != "args":
        return str(node.name)
    if isinstance(node, nodes.Getitem) and isinstance(node.node, nodes.Name) and \
            node.node.name == "args" and isinstance(node.arg, nodes.Const) and \
            isinstance(node.arg.value, str):
        return node.arg.value
    return None


_INCLUDE_TAG = re.compile(r"""\s*include\s+(?:"([^"\\]*)"|'([^'\\]*)')(\s+ignore\s+missing)?"""
                          r"""(?:\s+with\s+context)?\s*\Z""")


def inline_includes(source: str, includes: Mapping[str, str], mode: WhitespaceMode,
                    depth: int = 0) -> tuple[str | None, str]:
    """``source`` (``jinja`` mode) with each ``{% include "path" %}`` tag replaced by that
    package file's source, for a Jinja target that loads no other file (Prompty); or (None,
    why). The inlined text is fenced by ``{{ '' }}`` so a ``-`` at its edge strips nothing
    outside it, and a ``-`` on the include tag itself is kept as ``{{- '' }}``/``{{ '' -}}``:
    the result renders what the include renders. A tag found by the tokenizer (so never in
    ``{% raw %}`` or a comment); a tag this does not read stays, and the caller refuses.
    """
    out: list[str] = []
    pos = 0
    for tok in tokenize(source):
        if tok.kind != "block":
            continue
        found = _INCLUDE_TAG.match(source[tok.open_end:tok.close_start])
        if found is None:
            continue
        name = found.group(1) if found.group(1) is not None else found.group(2)
        if name not in includes:
            if not found.group(3):
                return None, f"{{% include {name!r} %}}: the file is not in the package"
            text = ""
        elif depth >= _MAX_DEPTH:
            return None, f"includes nested more than {_MAX_DEPTH} deep"
        else:
            inner, why = inline_includes(prepare(includes[name], mode), includes, mode,
                                         depth + 1)
            if inner is None:
                return None, why
            text = "{{ '' }}" + inner + "{{ '' }}"
        lead = "{{- '' }}" if source[tok.start:tok.open_end].endswith("-") else ""
        trail = "{{ '' -}}" if source[tok.close_start:tok.end].startswith("-") else ""
        out.append(source[pos:tok.start] + lead + text + trail)
        pos = tok.end
    out.append(source[pos:])
    return "".join(out), ""


def single_pieces(prompt: ir.IRPrompt,
                  target: str) -> tuple[list[Piece] | None, str, list[ir.Loss]]:
    """The prompt as one message's pieces, for one-message targets, or (None, why, losses)
    when a template is more than substitution (the prompt is then refused).

    A system message is kept as text at the top (the target has no system role) and several
    messages are joined with a blank line; both are losses, and so is anything not a message.
    A package file a message embeds is a :class:`ir.PackageFile` piece, for the exporter to
    reference as the target can.
    """
    losses: list[ir.Loss] = []
    out: list[Piece] = []
    messages = 0
    for item in prompt.messages:
        if not isinstance(item, ir.Message):
            kind = "a message loop" if isinstance(item, ir.Loop) else "a history splice"
            losses.append(ir.Loss(f"{kind} ({item.argument})", f"{target} sends one message; "
                                  "a list of messages from an argument cannot be expressed, "
                                  "so these messages are not written"))
            continue
        if item.role != "user":
            losses.append(ir.Loss(f"{item.role} message", f"{target} has no {item.role} role; "
                                  "its text is sent as part of the one user message"))
        chunk: list[Piece] = []
        for part in item.parts:
            if isinstance(part, ir.Text):
                found, why = pieces(part.template, prompt.whitespace, prompt.includes,
                                    prompt.whitespace)
                if found is None:
                    return None, why, losses
                chunk += found
            elif isinstance(part, ir.PackageFile):
                chunk.append(part)
            else:
                losses.append(ir.Loss(f"media ({part.url})", f"{target} prompt files carry "
                                      "text and file references only; a URL is not fetched"))
        if chunk:
            if messages and item.drop_blank:  # the package leaves it out when blank
                losses.append(ir.Loss("a message left out when blank", f"{target} sends one "
                                      "message: when this message renders blank, its blank-line "
                                      "separator is still written, which cannot be expressed"))
            out += (["\n\n"] if messages else []) + chunk
            messages += 1
    if messages > 1:
        losses.append(ir.Loss("several messages", f"{target} sends one message: the messages "
                              "are joined with a blank line"))
    return merged(out), "", losses


def markdown_file(prompt: ir.IRPrompt, front: JsonObject, body: str, target: str,
                  losses: list[ir.Loss]) -> str:
    """Frontmatter (with the model id) + body, for Markdown prompt files; what such a file
    cannot carry (generation settings, an output schema) is a loss."""
    if prompt.model and prompt.model.id:
        front["model"] = prompt.model.id
    if prompt.model and prompt.model.settings:
        losses.append(ir.Loss("model settings", f"{target} files have no generation settings"))
    if prompt.output:
        losses.append(ir.Loss("output", f"{target} files have no output schema"))
    if not front and not body.startswith("---"):
        return body
    if not front:  # a body that starts with `---` needs a frontmatter before it, or the
        # tool reads the body's own `---` block as one; `{}`, as an empty `---` pair would
        # pair with the body's `---`
        return "---\n{}\n---\n" + body
    return "---\n" + frontmatter(front) + "---\n" + body
