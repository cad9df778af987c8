"""IR -> a Dotprompt file (``.prompt``): YAML frontmatter + a Handlebars body.

The body is written from Jinja's own syntax tree of each template (in its whitespace mode),
so the text between tags is exactly what the template outputs, and the tags are Handlebars:
``{{x}}`` (Dotprompt does not escape), ``{{#if}}``/``{{else if}}``/``{{else}}``/``{{#unless}}``
(Jinja's ``x is mapping or x``, written by the Dotprompt importer, is Handlebars' ``if``
exactly), ``{{#ifEquals}}`` for ``==``, ``{{#each xs as |x|}}`` with ``@index``/``@first``/
``@last`` for ``loop.*``, ``@root.x`` for an argument inside a loop, ``x.length`` for
``x | length``, ``{{role}}`` between messages, ``{{history}}`` for a Splice of ``messages``,
``{{media}}`` for media parts.

Handlebars would remove a block tag's line when the tag stands alone on it, which the text
written here never means: every such tag gets an empty comment ``{{!}}`` beside it (which
makes it not standalone; Handlebars' own whitespace pass, run by
:mod:`promptops.interop.handlebars`, decides where). The result renders exactly, but tags sit
glued to the text rather than on lines of their own. Dotprompt trims the body, so blanks at
its very start and end are protected the same way.

Losses: any other Jinja (filters such as ``trim``, ``{% set %}``, macros, tests), a Loop,
``loop.index``, a default that is not empty (Dotprompt.render does not apply
``input.default``; it is still written for Genkit, which does), literal ``\\{{`` in text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from jinja2 import Environment, TemplateSyntaxError, nodes

from promptops.interop import handlebars as hb
from promptops.interop import ir
from promptops.interop.exporters._plain import argument
from promptops.interop.ir import JsonObject
from promptops.interop.yamltext import frontmatter
from promptops.sandbox.whitespace import ENVIRONMENT_OPTIONS, WhitespaceMode, prepare

_ENV = Environment(**ENVIRONMENT_OPTIONS)
_SEGMENT = re.compile(r"[^\s!\"#%-,\.\/;->@\[-\^`\{-~]+\Z")
_ROLES = {"user": "user", "assistant": "model", "system": "system"}
GUARD = "{{!}}"


def export(prompt: ir.IRPrompt) -> tuple[dict[str, str | bytes], list[ir.Loss]]:
    losses: list[ir.Loss] = []
    types: dict[str, str] = {a.name: a.type for a in prompt.arguments}
    body: list[str] = []
    for i, item in enumerate(prompt.messages):
        if isinstance(item, ir.Splice):
            if item.argument != "messages":
                losses.append(ir.Loss(f"messages from {item.argument}", "Dotprompt's history "
                                      "is the caller's messages, not an argument"))
            if item.trim:
                losses.append(ir.Loss(f"messages from {item.argument}", "Dotprompt does not "
                                      "trim history messages"))
            body.append("{{history}}")
            continue
        if isinstance(item, ir.Loop):
            losses.append(ir.Loss(f"messages for each {item.argument}", "Dotprompt has no "
                                  "message loop the importer can read back"))
            continue
        text = _message(prompt, item, types, losses)
        first = i == 0 and item.role == "user" and text[:1] not in ("", " ", "\t", "\n", "\r")
        body.append(text if first else '{{role "' + _ROLES[item.role] + '"}}' + text)
        if not item.drop_blank and not re.search(r"\S", re.sub(r"\{\{.*?\}\}", "", text)):
            losses.append(ir.Loss(f"{item.role} message", "Dotprompt drops a message that "
                                  "renders blank; this one has no text of its own"))
    source = "".join(body)
    if source[-1:].isspace():
        source += GUARD  # Dotprompt trims the body
    front = _frontmatter(prompt, losses)
    head = "---\n" + frontmatter(front) + \
        "---\n" if front else "---\n{}\n---\n"
    return {f"{prompt.name}.prompt": head + source}, losses


def _message(prompt: ir.IRPrompt, message: ir.Message, types: dict[str, str],
             losses: list[ir.Loss]) -> str:
    out: list[str] = []
    for part in message.parts:
        if isinstance(part, ir.Media):
            url = _media_value(prompt, part.url, types, losses)
            ctype = _media_value(prompt, part.content_type, types, losses) \
                if part.content_type else None
            out.append("{{media url=" + url + (f" contentType={ctype}" if ctype else "") + "}}")
            continue
        if isinstance(part, ir.PackageFile):
            losses.append(ir.Loss(f"{part.kind} {part.path}", "Dotprompt embeds media by URL "
                                  "only; the package file is not written"))
            continue
        writer = _Writer(types, losses, prompt.includes, prompt.whitespace)
        out.append(_guarded(writer.template(prepare(part.template, prompt.whitespace))))
    return "".join(out)


def _media_value(prompt: ir.IRPrompt, template: str, types: dict[str, str],
                 losses: list[ir.Loss]) -> str:
    ast = _ENV.parse(prepare(template, prompt.whitespace))
    if len(ast.body) == 1 and isinstance(ast.body[0], nodes.Output) and \
            len(ast.body[0].nodes) == 1:
        node = ast.body[0].nodes[0]
        if isinstance(node, nodes.TemplateData):
            return json.dumps(node.data)
        path = _Writer(types, losses).expr(node, ())
        if path is not None:
            return path
    losses.append(ir.Loss("media url", "only a literal URL or one argument"))
    return '""'


class _Writer:
    """One template's syntax tree as Handlebars source."""

    def __init__(self, types: dict[str, str], losses: list[ir.Loss],
                 includes: Mapping[str, str] | None = None,
                 mode: WhitespaceMode = "jinja") -> None:
        self.types = types
        self.losses = losses
        self.includes = includes or {}  # package files `{% include %}` names: inlined
        self.mode = mode
        self.depth = 0

    def template(self, source: str) -> str:
        try:
            ast = _ENV.parse(source)
        except TemplateSyntaxError as e:
            self.losses.append(ir.Loss("template", f"does not compile: {e.message}"))
            return ""
        return "".join(self.stmt(n, ()) for n in ast.body)

    def stmt(self, node: nodes.Node, loops: tuple[str, ...]) -> str:
        if isinstance(node, nodes.Output):  # adjacent literal pieces are escaped as one:
            written: list[str] = []  # "{" + {{ '{' }} is a "{{" Handlebars must not see
            text: list[str] = []
            for c in node.nodes:
                if isinstance(c, nodes.TemplateData):
                    text.append(c.data)
                elif isinstance(c, nodes.Const) and isinstance(c.value, str):
                    text.append(c.value)  # {{ 'text' }} prints its text
                else:
                    written.append(_text("".join(text), self.losses))
                    text = []
                    written.append(self.output(c, loops))
            written.append(_text("".join(text), self.losses))
            return _apart(written)
        if isinstance(node, nodes.If):
            return self.if_(node, loops)
        if isinstance(node, nodes.For) and isinstance(node.target, nodes.Name) and \
                node.test is None and not node.recursive:
            items = self.expr(node.iter, loops)
            if items is None:
                return self.lost("the loop's list", "not a path")
            name = node.target.name
            inner = (*loops, name)
            out = "{{#each " + items + " as |" + name + "|}}" + \
                "".join(self.stmt(n, inner) for n in node.body)
            if node.else_:
                out += "{{else}}" + "".join(self.stmt(n, loops) for n in node.else_)
            return out + "{{/each}}"
        if isinstance(node, nodes.FilterBlock) and node.filter.name == "trim":
            self.losses.append(ir.Loss("{% filter trim %}", "Dotprompt has no trim; the text "
                                       "is written untrimmed"))
            return "".join(self.stmt(n, loops) for n in node.body)
        if isinstance(node, nodes.Include):
            return self.include(node, loops)
        return self.lost(f"{{% {type(node).__name__.lower()} %}}", "no Handlebars equivalent")

    def include(self, node: nodes.Include, loops: tuple[str, ...]) -> str:
        """A package file's template written in place (a Dotprompt partial would need the
        application to register it; inlining keeps the file self-contained)."""
        name = node.template.value if isinstance(node.template, nodes.Const) else None
        if not isinstance(name, str) or name not in self.includes or not node.with_context \
                or self.depth >= 32:
            return self.lost("{% include %}", "only an include of a package file by its "
                             "literal name, with context, is inlined")
        try:
            ast = _ENV.parse(prepare(self.includes[name], self.mode))
        except TemplateSyntaxError as e:
            return self.lost(f"{{% include {name!r} %}}", f"does not compile: {e.message}")
        self.depth += 1
        try:
            return "".join(self.stmt(n, loops) for n in ast.body)
        finally:
            self.depth -= 1

    def if_(self, node: nodes.If, loops: tuple[str, ...]) -> str:
        head = self.condition(node.test, loops)
        if head is None:
            return self.lost("{% if %} condition", "not a path, x is mapping or x, not, or ==")
        helper, args = head
        out = "{{#" + helper + " " + args + "}}"
        out += "".join(self.stmt(n, loops) for n in node.body)
        for elif_ in node.elif_:
            cond = self.condition(elif_.test, loops)
            if cond is None or cond[0] != helper:
                return out + self.lost("{% elif %}", "a chain of different tests") + \
                    "{{/" + helper + "}}"
            out += "{{else " + cond[0] + " " + cond[1] + "}}" + \
                "".join(self.stmt(n, loops) for n in elif_.body)
        if node.else_:
            out += "{{else}}" + "".join(self.stmt(n, loops) for n in node.else_)
        return out + "{{/" + helper + "}}"

    def condition(self, test: nodes.Node, loops: tuple[str, ...]) -> tuple[str, str] | None:
        negate = False
        if isinstance(test, nodes.Not):
            negate, test = True, test.node
        if isinstance(test, nodes.Or) and isinstance(test.left, nodes.Test) and \
                test.left.name == "mapping" and _same(test.left.node, test.right):
            test = test.right  # the importer's spelling of Handlebars' if
        elif isinstance(test, nodes.Compare) and len(test.ops) == 1 and \
                test.ops[0].op in ("eq", "ne"):
            a, b = self.expr(test.expr, loops), self.expr(test.ops[0].expr, loops)
            if a is None or b is None:
                return None
            equal = (test.ops[0].op == "eq") != negate
            return ("ifEquals" if equal else "unlessEquals"), f"{a} {b}"
        else:
            arg = argument(test)
            if self.types.get(arg or "") not in ("string", "number", "integer", "boolean",
                                                 "array"):
                self.losses.append(ir.Loss("{% if %}", "Jinja reads an empty object as false, "
                                           "Handlebars as true"))
        path = self.expr(test, loops)
        if path is None:
            return None
        return ("unless" if negate else "if"), path

    def output(self, node: nodes.Node, loops: tuple[str, ...]) -> str:
        if isinstance(node, nodes.Const) and isinstance(node.value, str):
            # {{ 'text' }} prints its text; Handlebars would read {{"text"}} as a path
            return _text(node.value, self.losses)
        path = self.expr(node, loops)
        if path is None:
            return self.lost("{{ ... }}", "an expression that is not a path")
        arg = argument(node)
        if arg is not None and self.types.get(arg) in ("boolean", "number", "array", "object"):
            self.losses.append(ir.Loss(arg, f"JavaScript prints a {self.types[arg]} "
                                       "differently from Python"))
        return "{{" + path + "}}"

    def expr(self, node: nodes.Node, loops: tuple[str, ...]) -> str | None:
        if isinstance(node, nodes.Const):
            if isinstance(node.value, str):
                return json.dumps(node.value)
            if isinstance(node.value, bool) or node.value is None:
                return {True: "true", False: "false", None: "null"}[node.value]
            if isinstance(node.value, int | float):
                return repr(node.value)
            return None
        arg = argument(node)
        if arg is not None:
            if isinstance(node, nodes.Name) and node.name in loops:
                return str(node.name)
            seg = _segment(arg)
            return ("@root." + seg) if loops else seg
        if isinstance(node, nodes.Getattr):
            if isinstance(node.node, nodes.Name) and node.node.name == "loop" and loops:
                data = {"index0": "@index", "first": "@first", "last": "@last"}
                if node.attr in data:
                    return data[node.attr]
                self.losses.append(ir.Loss(f"loop.{node.attr}", "Handlebars has @index, "
                                           "@first and @last only"))
                return None
            base = self.expr(node.node, loops)
            return None if base is None else base + "." + _segment(node.attr)
        if isinstance(node, nodes.Getitem) and isinstance(node.arg, nodes.Const) and \
                isinstance(node.arg.value, str | int):
            base = self.expr(node.node, loops)
            return None if base is None else base + "." + _segment(str(node.arg.value))
        if isinstance(node, nodes.Filter) and node.name == "length" and not node.args and \
                node.node is not None:
            base = self.expr(node.node, loops)
            return None if base is None else base + ".length"
        return None

    def lost(self, what: str, why: str) -> str:
        self.losses.append(ir.Loss(what, why))
        return "{{!-- " + what.replace("--", "- -") + " --}}"


def _same(a: nodes.Node, b: nodes.Node) -> bool:
    return type(a) is type(b) and repr(a) == repr(b)


def _segment(name: str) -> str:
    return name if _SEGMENT.match(name) and name not in ("true", "false", "null", "undefined",
                                                         "this", "else") \
        else "[" + name.replace("]", "\\]") + "]"


def _apart(pieces: list[str]) -> str:
    """Join written pieces, with an empty comment ``{{!}}`` wherever a brace of the text would
    merge with a tag's (``{{x}}`` + ``}`` is ``{{x}}}``, ``{`` + ``{{x}}`` is ``{{{x}}``)."""
    out = ""
    for piece in pieces:
        if out and piece and ((out.endswith("}}") and piece.startswith("}")) or
                              (out.endswith("{") and piece.startswith("{{"))):
            out += "{{!}}"
        out += piece
    return out


def _text(text: str, losses: list[ir.Loss]) -> str:
    if "\\{{" in text:
        losses.append(ir.Loss("\\{{", "a backslash before {{ cannot be written in Handlebars"))
    return text.replace("{{", "\\{{")


def _guarded(source: str) -> str:
    """``source`` with ``{{!}}`` beside every tag Handlebars would find standalone.

    One guard per standalone tag, all placed in one pass; a guard joins its tag's line, so
    no tag on that line is standalone any more. The reparse checks that nothing is left
    standalone, and the loop is bounded by the number of tags.
    """
    for _ in range(source.count("{{") + 1):
        try:
            program = hb.parse(source)
        except hb.HandlebarsError:
            return source
        spots = _standalone_tags(program, source)
        if not spots:
            return source
        for spot in sorted(spots, reverse=True):
            source = source[:spot] + GUARD + source[spot:]
    return source


def _standalone_tags(program: hb.Program, source: str) -> set[int]:
    """The offsets of the tags Handlebars would treat as standalone."""
    lines = [0] + [m.end() for m in re.finditer("\n", source)]
    found: list[int] = []

    def walk(p: hb.Program | None) -> None:
        for node in p.body if p is not None else ():
            if isinstance(node, hb.Block):
                if node.open_standalone:
                    found.append(node.offset)
                if node.else_standalone:
                    found.append(node.else_offset)
                if node.close_standalone:
                    found.append(node.close_offset)
                walk(node.program)
                walk(node.inverse)
            elif isinstance(node, hb.Comment | hb.Partial) and node.standalone:
                found.append(lines[node.line - 1] + node.col - 1)

    walk(program)
    return set(found)


def _frontmatter(prompt: ir.IRPrompt, losses: list[ir.Loss]) -> JsonObject:
    front: JsonObject = {}
    if prompt.model and prompt.model.id:
        front["model"] = prompt.model.id
    if prompt.model and prompt.model.settings:
        front["config"] = dict(prompt.model.settings)
    if prompt.description:
        front["description"] = prompt.description
    if prompt.tools:
        front["tools"] = [t.name for t in prompt.tools]
    if prompt.arguments:
        front["input"] = _input(prompt, losses)
    if prompt.output:
        out: JsonObject = {}
        if prompt.output.format:
            out["format"] = prompt.output.format
        if prompt.output.schema is not None:
            out["schema"] = prompt.output.schema
        front["output"] = out
    for key in ("variant", "version"):
        if key in prompt.metadata:
            front[key] = prompt.metadata[key]
    return front


def _input(prompt: ir.IRPrompt, losses: list[ir.Loss]) -> JsonObject:
    """Dotprompt's ``input``: the arguments as a JSON Schema, with their defaults."""
    props: JsonObject = {}
    for arg in prompt.arguments:
        if arg.name == "messages" and any(isinstance(m, ir.Splice) for m in prompt.messages):
            continue
        prop: JsonObject = {"type": arg.type, **arg.schema}
        if arg.description:
            prop["description"] = arg.description
        props[arg.name] = prop
    schema: JsonObject = {"type": "object", "properties": props}
    required = [a.name for a in prompt.arguments if a.required and a.name in props]
    if required:
        schema["required"] = required
    spec: JsonObject = {"schema": schema}
    defaults = {a.name: a.default for a in prompt.arguments
                if a.has_default and a.name in props and a.default not in ("", [], None)}
    if defaults:
        spec["default"] = defaults
        losses.append(ir.Loss(f"defaults {sorted(defaults)}", "Dotprompt.render does not "
                              "apply input.default (Genkit does): a missing value renders "
                              "empty"))
    return spec
