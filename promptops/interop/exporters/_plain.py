"""Reading an IR template as plain substitution: literal text and argument references only.

VS Code prompt files and Claude Code commands substitute variables and nothing else, so a
template exports to them exactly when, once its whitespace mode is applied, Jinja's own parse
of it is text and ``{{ name }}`` outputs - no tag, no filter, no expression. This module does
that reading on Jinja's syntax tree (never on the source text), and also recognises the two
forms the Claude importer writes (``$N`` words and the appended ``ARGUMENTS:`` line) so a
command survives import -> export unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

import yaml
from jinja2 import Environment, TemplateSyntaxError, nodes

from promptops.interop import ir
from promptops.interop.ir import JsonObject
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


Piece = str | Ref | Appended


def pieces(template: str, mode: WhitespaceMode) -> tuple[list[Piece] | None, str]:
    """The template as literal text and references, or (None, why it is not that)."""
    try:
        ast = _ENV.parse(prepare(template, mode))
    except TemplateSyntaxError as e:
        return None, f"the template does not compile: {e.message}"
    out: list[Piece] = []
    for node in ast.body:
        if not isinstance(node, nodes.Output):
            return None, f"{{% {type(node).__name__.lower()} %}} logic"
        for child in node.nodes:
            if isinstance(child, nodes.TemplateData):
                if out and isinstance(out[-1], str):
                    out[-1] += child.data
                else:
                    out.append(child.data)
                continue
            piece = _reference(child)
            if piece is None:
                return None, "an expression that is not a plain argument"
            out.append(piece)
    return out, ""


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


def single_text(prompt: ir.IRPrompt, target: str) -> tuple[str, list[ir.Loss]]:
    """The prompt as one message, as a ``jinja``-mode template, for one-message targets.

    A system message is kept as text at the top (the target has no system role) and several
    messages are joined with a blank line; both are losses, and so is anything not a message.
    """
    losses: list[ir.Loss] = []
    texts: list[str] = []
    for item in prompt.messages:
        if not isinstance(item, ir.Message):
            losses.append(ir.Loss(type(item).__name__.lower(), f"{target} sends one message; "
                                  "a list of messages from an argument cannot be expressed"))
            continue
        if item.role != "user":
            losses.append(ir.Loss(f"{item.role} message", f"{target} has no {item.role} role; "
                                  "its text is sent as part of the one user message"))
        for part in item.parts:
            if isinstance(part, ir.Text):
                texts.append(prepare(part.template, prompt.whitespace))
            else:
                losses.append(ir.Loss("media", f"{target} prompt files carry text only"))
    if len(texts) > 1:
        losses.append(ir.Loss("several messages", f"{target} sends one message: the messages "
                              "are joined with a blank line"))
    return "\n\n".join(texts), losses


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
    return "---\n" + yaml.safe_dump(front, sort_keys=False, allow_unicode=True,
                                    width=1000) + "---\n" + body
