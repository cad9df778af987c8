"""The IR as a promptops package, and a built package as the IR: where interop meets the format.

``to_files`` writes each imported prompt as a ``prompts/<name>.prompt.yaml`` in the format of
:mod:`promptops.pipeline.model`; every IR concept has a field there (system role, typed
arguments and any argument name, model/tools/output/samples/metadata, history splices,
``omitIfBlank``, a per-prompt ``whitespace`` mode), so the file renders what the IR renders.
A message loop (promptfoo's ``_conversation``) is a ``for:`` group; a message of several
parts (Dotprompt's ``{{media}}`` between text) is one message per part, each after the first
marked ``continues``, a media part as a ``resource_link`` named ``media`` (its URL is what an
MCP client can fetch; image content would need the bytes when the prompt renders).

``from_bundle`` reads a built bundle back as IR prompts, which is what the exporters take, so
``promptops export`` works on any package, imported or hand-written.

The YAML is written by PyYAML with block literals for multi-line text where YAML can hold
the text exactly (its emitter falls back to a quoted scalar otherwise), and the package
loader reads it back byte for byte (tests/interop/test_import_command.py renders both).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from typing import Any

import yaml
from jinja2 import Environment, TemplateSyntaxError, meta

from promptops.interop import ir
from promptops.interop.ir import JsonObject
from promptops.interop.yamltext import typed_plain
from promptops.pipeline import argtypes
from promptops.pipeline.bundle_types import Bundle, Message, Prompt
from promptops.pipeline.model import PROMPT_NAME_RE

_NAME_OK = re.compile(PROMPT_NAME_RE)
_ENV = Environment()  # parsing only: which arguments a dropped message reads
_BAD_NAME = re.compile(r"[^A-Za-z0-9_.-]+")


def prompt_name(name: str) -> str:
    """An MCP prompt name the format accepts, as close to ``name`` as it can be."""
    if _NAME_OK.match(name):
        return name
    cleaned = _BAD_NAME.sub("-", name).strip("-._")[:128] or "prompt"
    return cleaned if _NAME_OK.match(cleaned) else "p-" + cleaned[:126]


def to_document(prompt: ir.IRPrompt, package_mode: str) -> tuple[JsonObject, list[ir.Loss]]:
    """The prompt file's content for ``prompt``, and what it could not hold."""
    losses: list[ir.Loss] = []
    doc: JsonObject = {}
    for key in ("title", "description"):
        if getattr(prompt, key):
            doc[key] = getattr(prompt, key)
    if prompt.whitespace != package_mode:
        doc["whitespace"] = prompt.whitespace
    carried: JsonObject = {}
    if prompt.arguments:
        doc["arguments"] = [_argument(a, carried) for a in prompt.arguments]
    doc["messages"] = [m for item in prompt.messages for m in _messages(item, losses)]
    doc.update(_model_keys(prompt))
    if prompt.samples:
        doc["samples"] = _samples(prompt, losses)
    if prompt.metadata or carried:
        doc["metadata"] = {**prompt.metadata,
                           **({"import.argumentSchema": carried} if carried else {})}
    return doc, losses


def _samples(prompt: ir.IRPrompt, losses: list[ir.Loss]) -> list[ir.Json]:
    """The prompt's samples, each kept to the arguments it declares."""
    declared = {a.name for a in prompt.arguments}
    samples = []
    for s in prompt.samples:
        unknown = sorted(set(s.arguments) - declared)
        if unknown:
            losses.append(ir.Loss(f"sample {s.name}: {', '.join(unknown)}", "the sample "
                                  "sets values the prompt declares no argument for"))
        samples.append({"name": s.name, "arguments": {k: v for k, v in s.arguments.items()
                                                      if k in declared}})
    return samples


def _model_keys(prompt: ir.IRPrompt) -> JsonObject:
    """``model``, ``tools`` and ``output``: each only when the prompt has one."""
    doc: JsonObject = {}
    if prompt.model is not None and (prompt.model.id or prompt.model.settings):
        doc["model"] = {k: v for k, v in (("id", prompt.model.id),
                                          ("settings", dict(prompt.model.settings))) if v}
    if prompt.tools:
        doc["tools"] = [{"name": t.name, **({"definition": dict(t.definition)}
                                            if t.definition is not None else {})}
                        for t in prompt.tools]
    if prompt.output is not None and (prompt.output.format or prompt.output.schema is not None):
        doc["output"] = {k: v for k, v in (("format", prompt.output.format),
                                           ("schema", prompt.output.schema)) if v is not None}
    return doc


def _argument(a: ir.Argument, carried: JsonObject) -> JsonObject:
    """The argument's entry; schema keywords the format does not enforce go to ``carried``
    (the prompt's metadata ``import.argumentSchema``), so nothing is dropped."""
    out: JsonObject = {"name": a.name}
    if a.description:
        out["description"] = a.description
    if a.type != "string":
        out["type"] = a.type
    schema = {k: v for k, v in a.schema.items() if k in argtypes.KEYWORDS}
    other = {k: v for k, v in a.schema.items() if k not in argtypes.KEYWORDS}
    if schema and not argtypes.unknown_keywords(schema):
        out["schema"] = schema
    elif schema:
        other = dict(a.schema)
    if other:
        carried[a.name] = other
    if a.required and not a.has_default:
        out["required"] = True
    if a.has_default and a.default is not None:
        out["default"] = a.default
    return out


def _messages(item: ir.MessageItem, losses: list[ir.Loss]) -> list[JsonObject]:
    if isinstance(item, ir.Splice):
        return [{"history": item.argument, **({"strip": True} if item.trim else {})}]
    if isinstance(item, ir.Loop):  # the format's `for:` group, one message per inner one
        loop = f"{item.item} in {item.argument}"
        return [{**m, "for": loop} for inner in item.messages for m in _messages(inner, losses)]
    out: list[JsonObject] = []
    for n, part in enumerate(item.parts):  # a part after the first `continues` the message
        entry: JsonObject = {"role": item.role}
        if isinstance(part, ir.Text):
            entry["text"] = part.template
            if item.drop_blank:
                entry["omitIfBlank"] = True
        elif isinstance(part, ir.Media):
            entry["resource_link"] = _media_link(part, losses)
        else:  # only from_bundle makes these (for the exporters); no importer does
            losses.append(ir.Loss(f"{part.kind} {part.path}", "a package file is not imported"))
            continue
        if n:
            entry["continues"] = True
        out.append(entry)
    return out


MEDIA_NAME = "media"  # the resource_link name of an imported media part


def _media_link(part: ir.Media, losses: list[ir.Loss]) -> JsonObject:
    """A media part as an MCP resource link: its URL is the link (an MCP client fetches it;
    image content would need the bytes at render time), its content type the mimeType."""
    link: JsonObject = {"uri": part.url, "name": MEDIA_NAME}
    if part.content_type is not None and "{" in part.content_type:
        losses.append(ir.Loss(f"media contentType {part.content_type}", "a resource link's "
                              "mimeType is fixed text in the format, not a template; left out"))
    elif part.content_type:
        link["mimeType"] = part.content_type
    return link


def in_order(doc: Mapping[str, object]) -> JsonObject:
    """``doc`` with its keys, and each argument's and message's, in the order the format
    declares them: the order lint's PO108 (key-order) expects, as a person writes them."""
    from promptops.lint.rules.po108_key_order import orders

    order = orders()

    def sort(item: Mapping[str, object], keys: tuple[str, ...]) -> JsonObject:
        rank = {k: i for i, k in enumerate(keys)}
        return {k: item[k] for k in sorted(item, key=lambda k: rank.get(k, len(keys)))}

    out = sort(doc, order["prompt"])
    for field in ("arguments", "messages"):
        items = out.get(field)
        if isinstance(items, list):
            out[field] = [sort(i, order[field]) if isinstance(i, Mapping) else i for i in items]
    return out


# What a block literal holds exactly: printable text, tabs and "\n" line breaks (not "\r",
# NEL or the Unicode separators, which YAML reads as line breaks; not a BOM).
_BLOCK_SAFE = re.compile("[\t\n\x20-\x7e\xa0-\ud7ff\ue000-\ufefe\uff00-\ufffd"
                         "\U00010000-\U0010ffff]*")


_BREAKS = re.compile("[\r\x85\u2028\u2029]")


class _Dumper(yaml.SafeDumper):
    """Block literals for multi-line text; no anchors (each value is written where it is).

    A block literal whose text starts with a line break gets no indentation indicator when
    its first non-blank line is not indented (YAML takes the indentation from that line):
    ``|`` where PyYAML writes ``|2-``, as a person writes it.
    """

    def analyze_scalar(self, scalar: str) -> Any:
        """PyYAML refuses a block literal for text with a space before a line break (the
        trailing whitespace of a prompt's line); YAML keeps it exactly, so a multi-line text
        of printable characters is a block literal whatever its spaces."""
        if "\n" in scalar and _BLOCK_SAFE.fullmatch(scalar):
            return _BlockAnalysis(self, scalar)
        return super().analyze_scalar(scalar)

    def determine_block_hints(self, text: str) -> str:
        hints: str = super().determine_block_hints(text)
        first = text.lstrip("\n")
        if text[:1] == "\n" and first and first[0] not in " \t\x85\u2028\u2029":
            hints = hints.removeprefix(str(self.best_indent))
        elif first[:1] == "\t" and not hints[:1].isdigit():  # libyaml will not detect the
            hints = str(self.best_indent) + hints  # indentation from a line starting so
        return hints

    def ignore_aliases(self, data: object) -> bool:
        return True


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    # "\r", NEL and the Unicode line separators are line breaks to YAML: only a double-
    # quoted scalar, which escapes them, keeps them (PyYAML's plain or single-quoted folds them)
    style = '"' if _BREAKS.search(value) else "|" if "\n" in value else None
    if style is None and typed_plain(value):
        style = "'"
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


class _BlockAnalysis:
    """PyYAML's analysis of a multi-line text of printable characters, made only if read.

    Such a text is allowed a block literal (``_Dumper.analyze_scalar``), and ``_str`` gives
    it that style or, with a YAML line break in it, double quotes: either way the emitter
    reads only ``scalar`` and ``allow_block`` (the other fields decide a plain or quoted
    style, or a simple key). PyYAML's analysis walks the text character by character in
    Python, the costliest part of writing an imported package (the prompt texts are most of
    its bytes); any other field read makes it, so every answer is PyYAML's own.
    """

    def __init__(self, dumper: _Dumper, scalar: str) -> None:
        self.scalar = scalar
        self.allow_block = True
        self._dumper = dumper

    def __getattr__(self, name: str) -> object:
        if name.startswith("__"):
            raise AttributeError(name)
        full = yaml.SafeDumper.analyze_scalar(self._dumper, self.scalar)
        full.allow_block = True
        self.__dict__.update(vars(full))
        return getattr(full, name)


_Dumper.add_representer(str, _str)


def dump(doc: Mapping[str, object]) -> str:
    """YAML the package loader reads back to exactly ``doc``."""
    return yaml.dump(dict(doc), Dumper=_Dumper, sort_keys=False, allow_unicode=True,
                     width=100_000)


# ---- back: a built package as IR prompts --------------------------------------------------
def from_bundle(bundle: Bundle) -> list[ir.IRPrompt]:
    """Every prompt of ``bundle`` as the IR (for the exporters)."""
    package = bundle["package"]
    mode = package.get("whitespace", "jinja")
    return [_prompt(p, bundle, mode, package.get("systemRole", "user")) for p in bundle["prompts"]]


def _prompt(p: Prompt, bundle: Bundle, mode: str, system_role: str) -> ir.IRPrompt:
    losses: list[ir.Loss] = []
    items: list[ir.MessageItem] = []
    for m in p["messages"]:
        if m["type"] == "history":
            items.append(ir.Splice(m["argument"], trim=bool(m.get("strip"))))
            continue
        part = _part(m, bundle, losses)
        if part is None:
            continue
        message = ir.Message(m.get("role", "user"), (part,),
                             drop_blank=bool(m.get("omitIfBlank")))
        _add(items, message, m)
    args = tuple(ir.Argument(
        a["name"], a.get("type", "string"), required=bool(a.get("required")),
        default=a["default"] if "default" in a else ir.NO_DEFAULT if a.get("required")
        else "" if a.get("type", "string") == "string" else None,  # what the renderer binds
        description=a.get("description"), schema=a.get("schema") or {})
        for a in p["arguments"])
    model = p.get("model")
    output = p.get("output")
    return ir.IRPrompt(
        name=p["name"], source=p["source"], ecosystem="promptops", messages=tuple(items),
        arguments=args, whitespace=p.get("whitespace", mode),  # type: ignore[arg-type]
        title=p.get("title"), description=p.get("description"),
        model=ir.Model(model.get("id"), model.get("settings") or {}) if model else None,
        tools=tuple(ir.Tool(t["name"], t.get("definition")) for t in p.get("tools") or ()),
        output=ir.Output(output.get("format"), output.get("schema")) if output else None,
        samples=tuple(ir.Sample(s["name"], s.get("arguments") or {})
                      for s in p.get("samples") or ()),
        metadata=p.get("metadata") or {}, losses=tuple(losses),
        includes=dict(bundle.get("templates") or {}))


def _part(m: Message, bundle: Bundle, losses: list[ir.Loss]) -> ir.Part | None:
    if m["type"] == "resource_link" and m.get("name") == MEDIA_NAME:
        return ir.Media(m["uri"], m.get("mimeType"))
    if m["type"] in ("resource", "image", "audio") and "file" in m:
        held = bundle["resources"][m["file"]]
        data = held["text"].encode("utf-8") if "text" in held else \
            base64.b64decode(held.get("blob", ""))
        return ir.PackageFile(m["file"], data, m["type"], m.get("uri"), m.get("mimeType"))
    if m["type"] != "text":
        what = m.get("uri") or m.get("name") or ""
        fed = _arguments_read(m.get("text", "")) if m["type"] == "resource" else []
        losses.append(ir.Loss(f"a {m['type']} message{f' ({what})' if what else ''}",
                              "only text messages, package files and media links export"
                              + (f"; the message and what it reads from the argument"
                                 f"{'s' if len(fed) > 1 else ''} {', '.join(fed)} are not "
                                 "written" if fed else "; it is not written")))
        return None
    source = m["text"] if "text" in m else bundle["templates"][m["template"]]
    return ir.Text(source)


def _arguments_read(template: str) -> list[str]:
    """The names a template reads (for naming what a dropped message took with it)."""
    try:
        return sorted(meta.find_undeclared_variables(_ENV.parse(template)) - {"args"})
    except TemplateSyntaxError:
        return []


def _add(items: list[ir.MessageItem], message: ir.Message, m: Message) -> None:
    """Append ``message``: as a further part of the last message (``continues``), inside
    the open loop group (``loopItem``/``loopOver``), or on its own."""
    loop = (m["loopItem"], m["loopOver"]) if "loopOver" in m else None
    last = items[-1] if items else None
    inner: list[ir.Message]
    if loop is not None and isinstance(last, ir.Loop) and (last.item, last.argument) == loop:
        inner = list(last.messages)
        items.pop()
    elif loop is not None:
        inner = []
    else:
        inner = []
        if m.get("continues") and isinstance(last, ir.Message):
            items[-1] = ir.Message(last.role, last.parts + message.parts, last.drop_blank)
        else:
            items.append(message)
        return
    if m.get("continues") and inner:
        inner[-1] = ir.Message(inner[-1].role, inner[-1].parts + message.parts,
                               inner[-1].drop_blank)
    else:
        inner.append(message)
    items.append(ir.Loop(loop[1], loop[0], tuple(inner)))

