"""IR -> a Prompty file (``.prompty``, v1: what prompty 0.1.x loads).

Prompty renders the body with Jinja's defaults, splits the output on ``role:`` lines and
``strip()``s every message. So the body is each message as ``role:`` + its template in
``jinja`` mode (a standalone template is rewritten by the rule, which renders the same under
Jinja's defaults), a Splice is Prompty's own history loop, and a Loop is a ``{% for %}`` whose
body writes the role lines. Exact only where Prompty's parsing cannot change the text: a
message that may start or end with blanks is trimmed by Prompty (a loss, unless the template
trims itself), a line of literal text that reads as a role marker would split the message,
and ``args[...]`` does not exist in Prompty (its inputs are the only variables).
Prompty loads no other template file, so ``{% include %}`` of a package file is inlined in
the source (:func:`._plain.inline_includes`); an include it cannot inline refuses the prompt.

``${ENV:X}`` in the configuration is written ``${env:X}``, the spelling prompty 0.1 reads.
Defaults: Prompty fills a missing input from ``sample:``, not from ``inputs.x.default``, so the
defaults are written as the sample (and as ``default`` for the reader); other samples cannot
travel. ``model``: ``configuration`` as the Prompty importer kept it, else ``type: openai``
with ``name: <model id>``; ``parameters`` = settings, ``tools`` (definitions),
``response_format`` (output format).
"""

from __future__ import annotations

import re

from jinja2 import Environment, TemplateSyntaxError, nodes

from promptops.interop import ir
from promptops.interop.exporters import _plain
from promptops.interop.ir import JsonObject
from promptops.interop.yamltext import frontmatter
from promptops.sandbox.whitespace import ENVIRONMENT_OPTIONS, prepare

_MARKER = re.compile(r"(?im)^\s*#?\s*(assistant|function|system|user)\s*:\s*$")
_ENV = Environment(**ENVIRONMENT_OPTIONS)


def export(prompt: ir.IRPrompt) -> tuple[dict[str, str | bytes], list[ir.Loss]]:
    losses: list[ir.Loss] = []
    try:
        return _export(prompt, losses)
    except Refused as e:
        return {}, [*losses, ir.Loss("template", f"not exported: {e}")]


def _export(prompt: ir.IRPrompt,
            losses: list[ir.Loss]) -> tuple[dict[str, str | bytes], list[ir.Loss]]:
    body: list[str] = []
    for item in prompt.messages:
        if isinstance(item, ir.Message):
            body.append(_message(prompt, item, losses))
        elif isinstance(item, ir.Splice):
            if not item.trim:
                losses.append(ir.Loss(f"messages from {item.argument}", "Prompty trims every "
                                      "message, so spliced messages lose surrounding blanks"))
            body.append(f"{{% for item in {item.argument} %}}\n{{{{item.role}}}}:\n"
                        f"{{{{item.content}}}}\n{{% endfor %}}")
        else:
            inner = "".join(_message(prompt, m, losses) + "\n" for m in item.messages)
            body.append(f"{{% for {item.item} in {item.argument} %}}\n{inner}{{% endfor %}}")
    for arg in prompt.arguments:
        if not re.fullmatch(r"[A-Za-z_]\w*", arg.name):
            losses.append(ir.Loss(arg.name, "Prompty passes inputs as Jinja variables; this "
                                  "name is not one"))
    extra_samples = [s.name for s in prompt.samples if s.name != "sample"]
    if extra_samples:
        losses.append(ir.Loss(f"samples {extra_samples}", "a Prompty file has one sample, "
                              "which Prompty uses as defaults"))
    front = _frontmatter(prompt, losses)
    text = "---\n" + frontmatter(front) + \
        "---\n" + "\n\n".join(body) + "\n"
    return {f"{prompt.name}.prompty": text}, losses


def _message(prompt: ir.IRPrompt, message: ir.Message, losses: list[ir.Loss]) -> str:
    if message.role not in ("system", "user", "assistant"):
        losses.append(ir.Loss(message.role, "not a Prompty role"))
    texts = []
    for part in message.parts:
        if isinstance(part, ir.Media):
            losses.append(ir.Loss("media", "Prompty writes images as Markdown, which is not "
                                  "the same message"))
            continue
        if isinstance(part, ir.PackageFile):
            losses.append(ir.Loss(f"{part.kind} {part.path}", "a Prompty message is text; "
                                  "the package file is not written"))
            continue
        texts.append(prepare(part.template, prompt.whitespace))
    source = "".join(texts)
    if _has_include(source):
        inlined, why = _plain.inline_includes(source, prompt.includes, prompt.whitespace)
        if inlined is None or _has_include(inlined):
            raise Refused(why or "an include Prompty cannot load (it loads no other file)")
        source = inlined
    if "args[" in source:
        losses.append(ir.Loss("args[...]", "Prompty has no args variable"))
    _check_edges(source, message.role, losses)
    for m in _MARKER.finditer(source):
        losses.append(ir.Loss(m.group().strip(), "Prompty would start a new message at this "
                              "line"))
    return f"{message.role}:\n{source}"


class Refused(Exception):
    """A message Prompty would not render as the package does: the prompt is not written."""


def _has_include(source: str) -> bool:
    try:
        return any(True for _ in _ENV.parse(source).find_all((nodes.Include, nodes.Extends,
                                                                nodes.Import, nodes.FromImport)))
    except TemplateSyntaxError:
        return False


def _check_edges(source: str, role: str, losses: list[ir.Loss]) -> None:
    """A loss unless Prompty's strip() cannot change the message's text."""
    try:
        ast = _ENV.parse(source)
    except TemplateSyntaxError as e:
        losses.append(ir.Loss(f"{role} message", f"the template does not compile: {e.message}"))
        return
    body = ast.body
    if len(body) == 1 and isinstance(body[0], nodes.FilterBlock) and body[0].filter.name == "trim":
        return
    outputs = [n for n in body if isinstance(n, nodes.Output)]
    first = body[0] if body else None
    last = body[-1] if body else None
    safe = first is not None and last is not None
    for node, edge in ((first, 0), (last, -1)):
        if not isinstance(node, nodes.Output) or not node.nodes:
            safe = False
            continue
        piece = node.nodes[edge]
        if isinstance(piece, nodes.TemplateData):
            text = piece.data
            ch = text[0] if edge == 0 else text[-1]
            safe = safe and not ch.isspace()
        elif isinstance(piece, nodes.Filter) and piece.name == "trim":
            continue
        else:
            safe = False
    if not safe and outputs is not None:
        losses.append(ir.Loss(f"{role} message", "Prompty strips every message; this one may "
                              "start or end with blanks (a value, a tag or literal blanks at "
                              "its edge)"))


_OUTPUT_KEYS = ("type", "default", "description")  # prompty 0.1's PropertySettings


def _outputs(outputs: ir.Json, losses: list[ir.Loss]) -> ir.Json:
    """``outputs`` as prompty 0.1 loads it: each output's keys its PropertySettings takes
    (it refuses the file on any other, e.g. a nested ``properties``); the rest is a loss."""
    if not isinstance(outputs, dict):
        return outputs
    kept: JsonObject = {}
    for name, spec in outputs.items():
        if not isinstance(spec, dict):
            kept[name] = spec
            continue
        extra = sorted(k for k in spec if k not in _OUTPUT_KEYS)
        if extra:
            losses.append(ir.Loss(f"outputs.{name}: {', '.join(map(str, extra))}", "prompty "
                                  "0.1 refuses output keys other than type, default and "
                                  "description, so these are not written"))
        kept[name] = {k: v for k, v in spec.items() if k in _OUTPUT_KEYS}
    return kept


def _frontmatter(prompt: ir.IRPrompt, losses: list[ir.Loss]) -> JsonObject:
    front: JsonObject = {}
    if prompt.title or prompt.name:
        front["name"] = prompt.title or prompt.name
    if prompt.description:
        front["description"] = prompt.description
    for key in ("authors", "tags", "version"):
        if key in prompt.metadata:
            front[key] = prompt.metadata[key]
    other = sorted(k for k in prompt.metadata if k not in (
        "authors", "tags", "version", "prompty.model", "prompty.outputs"))
    if other:
        losses.append(ir.Loss(f"metadata {other}", "prompty 0.1 refuses keys it does not know, "
                              "so these cannot travel in the file"))
    if "prompty.outputs" in prompt.metadata:
        front["outputs"] = _outputs(prompt.metadata["prompty.outputs"], losses)
    front["model"] = _model(prompt, losses)
    inputs, sample = _inputs(prompt)
    if inputs:
        front["inputs"] = inputs
    if sample:
        front["sample"] = sample
    return front


def _model(prompt: ir.IRPrompt, losses: list[ir.Loss]) -> JsonObject:
    """Prompty 0.1's ``model``: api, configuration and parameters (tools and the
    response format among them)."""
    kept = prompt.metadata.get("prompty.model")
    model: JsonObject = {"api": "chat"}
    if isinstance(kept, dict):  # as the Prompty importer kept it, in prompty 0.1's own keys
        model.update({k: v for k, v in kept.items() if k in ("api", "response")})
        config = kept.get("configuration", kept.get("connection"))
        if isinstance(config, dict):
            model["configuration"] = {k: _env(v) for k, v in config.items()}
    else:
        model["configuration"] = {"type": "openai"}
        if prompt.model and prompt.model.id:
            model["configuration"]["name"] = prompt.model.id
    params: JsonObject = dict(prompt.model.settings) if prompt.model else {}
    if prompt.tools:
        if all(t.definition is not None for t in prompt.tools):
            params["tools"] = [t.definition for t in prompt.tools]
        else:
            losses.append(ir.Loss("tools", "Prompty tools are definitions; "
                                  f"{[t.name for t in prompt.tools]} are names only"))
    if prompt.output:
        if prompt.output.format:
            params["response_format"] = {"type": prompt.output.format}
            if isinstance(prompt.output.schema, dict):
                params["response_format"]["json_schema"] = prompt.output.schema
        elif prompt.output.schema is not None:
            losses.append(ir.Loss("output schema", "Prompty has a response_format, not a "
                                  "schema of its own"))
    if params:
        model["parameters"] = params
    return model


def _inputs(prompt: ir.IRPrompt) -> tuple[JsonObject, JsonObject]:
    """Prompty's ``inputs`` and the ``sample`` of their defaults."""
    inputs: JsonObject = {}
    sample: JsonObject = {}
    for arg in prompt.arguments:
        spec: JsonObject = {"type": "number" if arg.type == "integer" else arg.type}
        if arg.description:
            spec["description"] = arg.description
        if arg.has_default:
            spec["default"] = arg.default
            sample[arg.name] = arg.default
        inputs[arg.name] = spec
    return inputs, sample


def _env(value: object) -> object:
    """``${ENV:X}`` (older Prompty's spelling, refused by 0.1) as 0.1 reads it: ``${env:X}``."""
    return re.sub(r"\$\{ENV:", "${env:", value) if isinstance(value, str) else value
