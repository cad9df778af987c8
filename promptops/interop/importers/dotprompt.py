"""Dotprompt (``.prompt``, Genkit's format): YAML frontmatter + a Handlebars body.

What Dotprompt 1.x does, and so what the import reproduces (NOTES.md in the corpus has the
evidence): with frontmatter the body is ``trim()``med before compiling; Handlebars compiles
with ``noEscape`` and only Dotprompt's helpers; the output is split into messages on
``{{role}}``/``{{history}}`` markers and into parts on ``{{media}}``, blank pieces dropped;
a message starts as ``user``; ``model`` is our ``assistant``. ``input.default`` is *not*
applied by ``Dotprompt.render`` (only by Genkit's callers), so it travels as metadata and the
imported defaults are what a missing value renders as: ``""``.

The frontmatter maps to the IR: ``model`` + ``config`` -> model, ``tools`` -> tools,
``output.format``/``output.schema`` -> output (Picoschema expanded to JSON Schema, a named
schema kept as its name), ``input.schema`` -> typed arguments, ``description``, and every
other key (``variant``, ``version``, namespaced ``ext.keys``) -> metadata.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from promptops.interop import handlebars as hb
from promptops.interop.errors import InteropError
from promptops.interop.hbs_layout import Chunk, assemble, js_blank, js_trim
from promptops.interop.hbs_to_jinja import Scope, Translator
from promptops.interop.importers import _common, _picoschema
from promptops.interop.ir import (
    ArgType,
    Argument,
    IRPrompt,
    Json,
    Loss,
    Media,
    Message,
    MessageItem,
    Model,
    Output,
    Part,
    Role,
    Splice,
    Text,
    Tool,
)

_FRONTMATTER = re.compile(r"^---\s*(?:\r\n|\r|\n)([\s\S]*?)(?:\r\n|\r|\n)---\s*(?:\r\n|\r|\n)"
                          r"([\s\S]*)$")
_ROLES: dict[str, Role] = {"user": "user", "model": "assistant", "system": "system"}
_JSON_TYPES: dict[str, ArgType] = {"string": "string", "number": "number",
                                   "integer": "integer", "boolean": "boolean",
                                   "array": "array", "object": "object"}
HISTORY_ARGUMENT = "messages"
_HISTORY_SCHEMA = {"type": "array", "items": {"type": "object", "required": ["role"]}}
_RESERVED = ("config", "description", "ext", "input", "model", "name", "output", "raw",
             "toolDefs", "tools", "variant", "version")


_CONTEXT_WORDS = ("Dotprompt context data {0} (what Genkit passes as the render's context, "
                  "e.g. the session state), as a JSON object")


def parse(path: str, text: str, siblings: Mapping[str, str]) -> list[IRPrompt]:
    front, body, body_line = _split(path, text)
    losses: list[Loss] = []
    notes: list[str] = []
    arguments = _arguments(path, front, losses, notes)
    arg_types = {a.name: a.type for a in arguments}
    program = _parse(path, body, body_line)
    partial_cache: dict[str, hb.Program | None] = {}

    def partial(name: str) -> hb.Program | None:
        if name not in partial_cache:
            source = siblings.get(f"_{name}.prompt")
            partial_cache[name] = None if source is None else _parse(
                f"_{name}.prompt", source, 1)
        return partial_cache[name]

    tr = Translator(arg_types, partial)
    try:
        tr.program(program, Scope(), 0)
    except hb.HandlebarsError as e:
        raise InteropError(path, e.message, e.line + body_line - 1, e.col) from None
    out = tr.out
    losses += [Loss(what, reason, line + body_line - 1 if line else None)
               for what, reason, line in out.losses]
    notes += out.notes
    messages = _messages(out.chunks, losses, notes)
    _undeclared(out.used, out.iterated, out.objects, arguments, arg_types, notes)
    if any(isinstance(m, Splice) for m in messages):
        arguments.append(Argument(HISTORY_ARGUMENT, "array", False, [],
                                  "The conversation so far (Dotprompt's messages).",
                                  _HISTORY_SCHEMA))
    name, meta = _identity(path, front)
    return [IRPrompt(
        name=str(name), source=path, ecosystem="dotprompt", messages=tuple(messages),
        arguments=tuple(arguments), whitespace="standalone",
        description=front.get("description") if isinstance(front.get("description"), str)
        else None,
        model=_model(front), tools=_tools(front), output=_output(path, front, losses, notes),
        metadata=meta, losses=tuple(losses), notes=tuple(notes))]


def _split(path: str, text: str) -> tuple[dict[str, Json], str, int]:
    """The frontmatter, the body (JS-trimmed, as Dotprompt trims it) and its first line."""
    m = _FRONTMATTER.match(text)
    front: dict[str, Json] = {}
    body, body_line = text, 1
    if m and m.group(1):
        front = _common.mapping(path, _common.load_yaml(path, m.group(1), 2), "frontmatter")
        body = m.group(2)
        body_line = text.count("\n", 0, m.start(2)) + 1
        stripped = js_trim(body)
        body_line += body.count("\n", 0, body.find(stripped[:1]) if stripped else 0)
        body = stripped
    return front, body, body_line


def _undeclared(used: list[str], iterated: set[str], objects: set[str],
                arguments: list[Argument], arg_types: dict[str, ArgType],
                notes: list[str]) -> None:
    """Names the template uses but input.schema does not declare: context data
    (``@state``) and plain names become optional arguments, each with a note."""
    for name in used:
        if name.startswith("@") and name not in arg_types:  # context data (@state, @auth)
            arguments.append(Argument(name, "object", False, {}, _CONTEXT_WORDS.format(name)))
            arg_types[name] = "object"
            notes.append(f"{name}: Dotprompt reads it from the render call's context; "
                         f"imported as the optional object argument {name!r}")
            continue
        if name not in arg_types:
            kind: ArgType = "array" if name in iterated else \
                "object" if name in objects else "string"
            arguments.append(_common.optional_argument(name, kind, notes))
            arg_types[name] = kind
            notes.append(f"{name}: used by the template but not in input.schema; imported as "
                         f"an optional {kind}")


def _identity(path: str, front: dict[str, Json]) -> tuple[str, dict[str, Json]]:
    """The prompt's name and the frontmatter kept as metadata (variant, version...)."""
    meta = {k: v for k, v in front.items() if k not in _RESERVED or k in ("variant",
                                                                          "version", "ext", "raw")}
    spec = front.get("input")
    if isinstance(spec, dict) and "default" in spec:
        meta["dotprompt.input.default"] = spec["default"]
    out_spec = front.get("output")
    if isinstance(out_spec, dict):
        meta.update({f"dotprompt.output.{k}": v for k, v in out_spec.items()
                     if k not in ("format", "schema")})
    stem = _common.prompt_name(path, [".prompt"])
    given = front.get("name")
    name = given if isinstance(given, str) else stem
    if "." in stem and "variant" not in front:
        meta["variant"] = stem.rsplit(".", 1)[1]
    return str(name), meta


# The markers Dotprompt's helpers print and its toMessages splits the rendered text on
# (dotprompt/src/parse.ts): written literally in a template they split it just the same.
_ROLE_MARKER = re.compile(r"<<<dotprompt:role:([a-z]+)>>>")
_HISTORY_MARKER = re.compile(r"<<<dotprompt:history>>>")


def _parse(path: str, source: str, first_line: int) -> hb.Program:
    source = _HISTORY_MARKER.sub("{{history}}",
                                 _ROLE_MARKER.sub(lambda m: '{{role "' + m.group(1) + '"}}',
                                                  source))
    try:
        return hb.parse(source)
    except hb.HandlebarsError as e:
        raise InteropError(path, e.message, e.line + first_line - 1, e.col) from None


def _arguments(path: str, front: Mapping[str, Json], losses: list[Loss],
               notes: list[str]) -> list[Argument]:
    spec = front.get("input")
    if not isinstance(spec, dict):
        return []
    if isinstance(spec.get("default"), dict):
        notes.append("input.default is not applied by Dotprompt.render (Genkit's callers "
                     "apply it); kept as metadata dotprompt.input.default, and optional "
                     "arguments default to what a missing value renders: \"\"")
    try:
        schema = _picoschema.expand(spec.get("schema"))
    except ValueError as e:
        raise InteropError(path, f"input.schema: {e}", 1) from None
    if schema is None:
        return []
    if isinstance(schema, _picoschema.NamedSchema):
        losses.append(Loss("input.schema", f"the named schema {str(schema)!r} is defined in "
                           "code, not in the file: its arguments are not known"))
        return []
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict):
        return []
    required = set(schema.get("required") or ())
    out: list[Argument] = []
    for name, prop in props.items():
        if isinstance(prop, _picoschema.NamedSchema):
            notes.append(f"{name}: schema {str(prop)!r} is defined in code; imported as an "
                         "object")
            prop = {"type": "object"}
        prop = prop if isinstance(prop, dict) else {}
        kind = _arg_type(prop.get("type"))
        if kind is None:
            kind = "string"
            if prop.get("type") is not None or "enum" not in prop:
                notes.append(f"{name}: type {prop.get('type', 'any')!r} imported as string")
        extra = {k: _picoschema.plain(v) for k, v in prop.items()
                 if k not in ("type", "description")}
        desc = prop.get("description") if isinstance(prop.get("description"), str) else None
        if name in required:
            out.append(Argument(name, kind, True, description=desc, schema=extra))
            continue
        out.append(_common.optional_argument(name, kind, notes, desc, extra))
    return out


def _arg_type(value: Json) -> ArgType | None:
    if isinstance(value, list):  # optional fields are [type, "null"]
        value = next((v for v in value if v != "null"), None)
    return _JSON_TYPES.get(value) if isinstance(value, str) else None


def _model(front: Mapping[str, Json]) -> Model | None:
    model, config = front.get("model"), front.get("config")
    if model is None and not config:
        return None
    return Model(str(model) if model is not None else None,
                 config if isinstance(config, dict) else {})


def _tools(front: Mapping[str, Json]) -> tuple[Tool, ...]:
    tools = [Tool(t) for t in _common.tools_list(front.get("tools"))]
    defs = front.get("toolDefs")
    if isinstance(defs, list):
        tools += [Tool(str(d.get("name", "")), d) for d in defs if isinstance(d, dict)]
    return tuple(tools)


def _output(path: str, front: Mapping[str, Json], losses: list[Loss],
            notes: list[str]) -> Output | None:
    spec = front.get("output")
    if not isinstance(spec, dict):
        return None
    fmt = spec.get("format") if isinstance(spec.get("format"), str) else None
    try:
        schema = _picoschema.expand(spec.get("schema"))
    except ValueError as e:
        raise InteropError(path, f"output.schema: {e}", 1) from None
    if isinstance(schema, _picoschema.NamedSchema):
        notes.append(f"output.schema names {str(schema)!r}, a schema defined in code: kept as "
                     "that name")
        schema = str(schema)
    other = sorted(k for k in spec if k not in ("format", "schema"))
    if other:
        notes.append(f"output keys {other} are not Dotprompt's (format, schema): kept as "
                     "metadata")
    if fmt is None and schema is None:
        return None
    return Output(fmt, _picoschema.plain(schema))


def _messages(chunks: list[Chunk], losses: list[Loss], notes: list[str]) -> list[MessageItem]:
    """Dotprompt's toMessages, done on the template instead of the rendered text."""
    pieces: list[list[Chunk] | Chunk] = []
    for c in chunks:
        if c.kind in ("role", "history"):
            pieces.append(c)
        elif pieces and isinstance(pieces[-1], list):
            pieces[-1].append(c)
        else:
            pieces.append([c])
    items: list[MessageItem] = []
    role: Role = "user"
    current: list[list[Chunk]] = []

    def flush() -> None:
        if current:
            parts = _parts([c for seg in current for c in seg], notes)
            if parts:
                items.append(Message(role, tuple(parts), drop_blank=True))

    for piece in pieces:
        if isinstance(piece, Chunk) and piece.kind == "role":
            new = _ROLES.get(piece.payload[0])
            if new is None:
                losses.append(Loss("{{role \"" + piece.payload[0] + "\"}}", "MCP messages are "
                                   "user, assistant or system, Dotprompt's system, user or "
                                   "model (for another role dotprompt 1.1 sends no message); "
                                   "imported as user", piece.line))
                new = "user"
            if current and not _blank_static(current):
                flush()
                current = []
            role = new
        elif isinstance(piece, Chunk):  # history: the conversation, then a model message
            flush()
            current = []
            items.append(Splice(HISTORY_ARGUMENT))
            role = "assistant"
        elif not _blank_static([piece]):
            current.append(piece)
    flush()
    return items


def _blank_static(segments: list[list[Chunk]]) -> bool:
    """Whether the text is blank whatever the input (only literal whitespace)."""
    return all((c.kind == "text" and js_blank(c.text)) or c.kind == "dropped" or
               (c.kind == "text" and c.restored)
               for seg in segments for c in seg)


def _parts(chunks: list[Chunk], notes: list[str]) -> list[Part]:
    """A message's parts: text split at media markers, blank text pieces dropped."""
    parts: list[Part] = []
    buf: list[Chunk] = []

    def text() -> None:
        if buf and not _blank_static([buf]):
            parts.append(Text(assemble(buf)))
        buf.clear()

    for c in chunks:
        if c.kind == "media":
            text()
            parts.append(Media(c.payload[0], c.payload[1] or None))
        else:
            buf.append(c)
    text()
    return parts
