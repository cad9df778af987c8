"""The IR as a promptops package, and a built package as the IR: where interop meets the format.

``to_files`` writes each imported prompt as a ``prompts/<name>.prompt.yaml`` in the format of
:mod:`promptops.pipeline.model`; every IR concept has a field there (system role, typed
arguments and any argument name, model/tools/output/samples/metadata, history splices,
``omitIfBlank``, a per-prompt ``whitespace`` mode), so the file renders what the IR renders.
The two IR constructs the format does not have - a message of several parts (Dotprompt's
``{{media}}`` between text) and a message loop (promptfoo's ``_conversation``) - are
:class:`~promptops.interop.ir.Loss` es, written as their nearest form.

``from_bundle`` reads a built bundle back as IR prompts, which is what the exporters take, so
``promptops export`` works on any package, imported or hand-written.

The YAML is written by PyYAML with block literals for multi-line text where YAML can hold
the text exactly (its emitter falls back to a quoted scalar otherwise), and the package
loader reads it back byte for byte (tests/interop/test_import_command.py renders both).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import yaml

from promptops.interop import ir
from promptops.interop.ir import JsonObject
from promptops.pipeline import argtypes
from promptops.pipeline.bundle_types import Bundle, Prompt
from promptops.pipeline.model import PROMPT_NAME_RE

_NAME_OK = re.compile(PROMPT_NAME_RE)
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
    if prompt.samples:
        declared = {a.name for a in prompt.arguments}
        samples = []
        for s in prompt.samples:
            unknown = sorted(set(s.arguments) - declared)
            if unknown:
                losses.append(ir.Loss(f"sample {s.name}: {', '.join(unknown)}", "the sample "
                                      "sets values the prompt declares no argument for"))
            samples.append({"name": s.name, "arguments": {k: v for k, v in s.arguments.items()
                                                          if k in declared}})
        doc["samples"] = samples
    if prompt.metadata or carried:
        doc["metadata"] = {**prompt.metadata,
                           **({"import.argumentSchema": carried} if carried else {})}
    return doc, losses


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
    if isinstance(item, ir.Loop):
        losses.append(ir.Loss(f"for {item.item} in {item.argument}", "the format has no "
                              "message loop; each item's messages are written once, unrendered "
                              "for the loop"))
        return [m for inner in item.messages for m in _messages(inner, [])]
    parts = item.parts
    if len(parts) != 1 or not isinstance(parts[0], ir.Text):
        losses.append(ir.Loss("a message of several parts", "an MCP prompt message has one "
                              "content block; the parts are written as one text, media as "
                              "its URL"))
        text = "".join(p.template if isinstance(p, ir.Text) else '<media url="' + p.url + '">'
                       for p in parts)
    else:
        text = parts[0].template
    out: JsonObject = {"role": item.role, "text": text}
    if item.drop_blank:
        out["omitIfBlank"] = True
    return [out]


class _Dumper(yaml.SafeDumper):
    """Block literals for multi-line text; no anchors (each value is written where it is)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def dump(doc: Mapping[str, Any]) -> str:
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
        if m["type"] != "text":
            losses.append(ir.Loss(f"a {m['type']} message", "only text messages export"))
            continue
        source = m["text"] if "text" in m else bundle["templates"][m["template"]]
        if "template" in m and _includes(source):
            losses.append(ir.Loss(f"template {m['template']}", "its includes are not "
                                  "exported; the file's own text is"))
        items.append(ir.Message(m.get("role", "user"),
                                (ir.Text(source),), drop_blank=bool(m.get("omitIfBlank"))))
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
        metadata=p.get("metadata") or {}, losses=tuple(losses))


_INCLUDE = re.compile(r"\{%-?\s*(include|import|from|extends)\b")


def _includes(source: str) -> bool:
    return bool(_INCLUDE.search(source))
