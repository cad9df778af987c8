"""LangChain prompt files (JSON/YAML, ``load_prompt``'s format): ``_type: prompt|few_shot|chat``.

What langchain-core 1.x does with them (``langchain_core/prompts/loading.py``), reproduced:

* ``prompt``: a PromptTemplate; ``template`` or ``template_path`` (a ``.txt`` beside it).
  Formatted as one string, which reaches a chat model as one human (user) message.
* ``few_shot``: ``prefix``, each example formatted by ``example_prompt`` (inline, or
  ``example_prompt_path``), and ``suffix``, joined by ``example_separator`` (``\\n\\n``),
  empty pieces left out - and that joined text is *formatted again* with the inputs. The
  examples are static, so the import formats them once and inlines them, exactly so.
* ``chat``: the loader reads only ``messages[0].prompt.template``, as one human message.
* ``template_format``: ``f-string`` (default; ``{x}`` substitutes, ``{{``/``}}`` are braces),
  ``mustache`` (translated by :mod:`promptops.interop.mustache`); ``jinja2`` is not translated
  (a loss), and the loader refuses it.
* ``partial_variables`` apply when the input is absent: they are the arguments' defaults;
  the other variables are required (LangChain raises on a missing one).

Files langchain-core refuses (``_type: chat`` with a ``template`` list instead of ``messages``,
an ``output_parser`` other than ``default``) are imported as they evidently mean, with a loss
saying the source engine refuses them: the rendering cannot be judged by LangChain.
"""

from __future__ import annotations

import json
import string
from collections.abc import Mapping
from typing import Any, Literal

from promptops.interop import mustache
from promptops.interop.errors import InteropError
from promptops.interop.importers import _common
from promptops.interop.ir import (
    Argument,
    IRPrompt,
    JsonObject,
    Loss,
    Message,
    Output,
    Role,
    Text,
)
from promptops.interop.jinja_build import Builder, variable

_ROLES: dict[str, Role] = {"human": "user", "user": "user", "ai": "assistant",
                           "assistant": "assistant", "system": "system"}
_FORMATTER = string.Formatter()


def parse(path: str, text: str, siblings: Mapping[str, str]) -> list[IRPrompt]:
    config = _load(path, text)
    kind = config.get("_type", "prompt")
    losses: list[Loss] = []
    notes: list[str] = []
    if "_type" not in config:
        notes.append("no _type: LangChain reads it as a prompt")
    messages: list[tuple[Role, str]]
    if kind == "prompt":
        messages = [("user", _template(path, config, "template", siblings))]
    elif kind == "few_shot":
        messages = [("user", _few_shot(path, config, siblings, notes))]
    elif kind == "chat":
        messages = _chat(path, config, losses)
    else:
        raise InteropError(path, f"_type {kind!r}: LangChain loads prompt, few_shot and chat", 1)
    fmt = config.get("template_format", "f-string")
    if fmt == "mustache":
        return [_mustache_prompt(path, config, messages, losses, notes)]
    if fmt != "f-string":
        losses.append(Loss(f"template_format: {fmt}", "only f-string templates are translated; "
                           "this one is imported as an f-string, which it is not" +
                           ("; langchain-core's loader refuses jinja2 templates (arbitrary "
                            "code execution)" if fmt == "jinja2" else "")))
    output = _output_parser(config, losses)
    ir_messages = []
    used: list[str] = []
    for role, template in messages:
        source, names = _fstring(path, template, losses)
        used += [n for n in names if n not in used]
        ir_messages.append(Message(role, (Text(source),)))
    partials = config.get("partial_variables") or {}
    declared = [str(v) for v in config.get("input_variables") or []]
    arguments = []
    for name in [*used, *(d for d in declared if d not in used)]:
        if name in partials:
            arguments.append(Argument(name, "string", False, str(partials[name]),
                                      "Defaults to the prompt's partial variable."))
        else:
            arguments.append(Argument(name, "string", True))
    unused = [d for d in declared if d not in used]
    if unused:
        notes.append(f"input_variables {unused} are not in the template: kept as required "
                     "arguments, as LangChain requires them")
    meta = {k: v for k, v in config.items()
            if k in ("metadata", "tags", "name", "validate_template")}
    if config.get("output_parser"):
        meta["langchain.output_parser"] = config["output_parser"]
    return [IRPrompt(
        name=_common.prompt_name(path, [".json", ".yaml", ".yml"]), source=path,
        ecosystem="langchain", messages=tuple(ir_messages), arguments=tuple(arguments),
        whitespace="standalone", output=output, metadata=meta, losses=tuple(losses),
        notes=tuple(notes))]


def _mustache_prompt(path: str, config: Mapping[str, Any], messages: list[tuple[Role, str]],
                     losses: list[Loss], notes: list[str]) -> IRPrompt:
    """``template_format: mustache``: langchain-core's chevron port, translated by
    :mod:`promptops.interop.mustache` (``jinja`` whitespace mode). The file's
    ``input_variables`` (else the names read outside any section, as LangChain infers them)
    are required; every other name is optional (empty, as chevron prints a missing name); a
    top-level section key is an array argument (sections iterate lists)."""
    ir_messages, top, inner, iterated = [], [], [], set()
    for role, template in messages:
        try:
            done = mustache.to_jinja(template)
        except mustache.MustacheError as e:
            raise InteropError(path, f"mustache template: {e.message}", 1) from None
        notes.extend(done.notes)
        iterated |= done.iterated
        top += [n for n in done.top if n not in top]
        inner += [n for n in done.names if n not in inner]
        ir_messages.append(Message(role, (Text(done.source),)))
    partials = config.get("partial_variables") or {}
    declared = [str(v) for v in config.get("input_variables") or []]
    required = declared or top  # the file's input variables, else those LangChain infers
    arguments: list[Argument] = []
    for name in [*top, *(n for n in [*inner, *declared] if n not in top)]:
        if any(a.name == name for a in arguments):
            continue
        kind: Literal["string", "array"] = "array" if name in iterated else "string"
        if name in partials:
            arguments.append(Argument(name, kind, False, partials[name],
                                      "Defaults to the prompt's partial variable."))
        elif name in required:
            arguments.append(Argument(name, kind, True))
        else:
            arguments.append(Argument(name, kind, False, "" if kind == "string" else []))
    notes.append("template_format: mustache, translated to Jinja")
    return IRPrompt(
        name=_common.prompt_name(path, [".json", ".yaml", ".yml"]), source=path,
        ecosystem="langchain", messages=tuple(ir_messages), arguments=tuple(arguments),
        whitespace="jinja", output=_output_parser(config, losses),
        metadata={k: v for k, v in config.items() if k in ("metadata", "tags", "name")},
        losses=tuple(losses), notes=tuple(notes))


def _load(path: str, text: str) -> JsonObject:
    if path.lower().endswith(".json"):
        try:
            data = json.loads(text)
        except ValueError as e:
            err = e if isinstance(e, json.JSONDecodeError) else None
            raise InteropError(path, f"invalid JSON: {e}", err.lineno if err else 1,
                               err.colno if err else 0) from None
    else:
        data = _common.load_yaml(path, text)
    return _common.mapping(path, data, "a LangChain prompt file")


def _template(path: str, config: Mapping[str, object], field: str,
              siblings: Mapping[str, str]) -> str:
    if f"{field}_path" in config:
        name = str(config[f"{field}_path"])
        if field in config:
            raise InteropError(path, f"both {field}_path and {field} are given", 1)
        if not name.endswith(".txt"):
            raise InteropError(path, f"{field}_path {name!r}: LangChain reads .txt only", 1)
        text = siblings.get(name)
        if text is None:
            raise InteropError(path, f"{field}_path {name!r} is not beside the prompt", 1)
        return text
    value = config.get(field)
    if not isinstance(value, str):
        raise InteropError(path, f"{field} must be a string", 1)
    return value


def _few_shot(path: str, config: Mapping[str, object], siblings: Mapping[str, str],
              notes: list[str]) -> str:
    if "example_prompt_path" in config:
        name = str(config["example_prompt_path"])
        text = siblings.get(name)
        if text is None:
            raise InteropError(path, f"example_prompt_path {name!r} is not beside the prompt", 1)
        example_prompt = _load(name, text)
    else:
        example_prompt = _common.mapping(path, config.get("example_prompt"), "example_prompt")
    examples = config.get("examples")
    if isinstance(examples, str):
        text = siblings.get(examples)
        if text is None:
            raise InteropError(path, f"examples {examples!r} is not beside the prompt", 1)
        examples = json.loads(text) if examples.endswith(".json") else \
            _common.load_yaml(examples, text)
        notes.append(f"examples read from {config['examples']} and inlined")
    if not isinstance(examples, list):
        raise InteropError(path, "examples must be a list or a .json/.yaml file", 1)
    ex_template = _template(path, example_prompt, "template", siblings)
    ex_vars = [str(v) for v in example_prompt.get("input_variables") or []]
    strings = []
    for ex in examples:
        values = {k: ex[k] for k in (ex_vars or ex)}
        strings.append(_FORMATTER.format(ex_template, **values))
    prefix = _template(path, config, "prefix", siblings) if (
        "prefix" in config or "prefix_path" in config) else ""
    suffix = _template(path, config, "suffix", siblings)
    sep = str(config.get("example_separator", "\n\n"))
    return sep.join(p for p in [prefix, *strings, suffix] if p)


def _chat(path: str, config: Mapping[str, Any], losses: list[Loss]) -> list[tuple[Role, str]]:
    if "messages" in config:
        messages = config["messages"]
        if not messages or not isinstance(messages[0], dict) or not isinstance(
                messages[0].get("prompt"), dict) or not messages[0]["prompt"].get("template"):
            raise InteropError(path, "Can't load chat prompt without template", 1)
        if len(messages) > 1:
            losses.append(Loss("messages[1:]", "langchain-core's loader reads only the first "
                               "message's template; the others are not imported either"))
        return [("user", str(messages[0]["prompt"]["template"]))]
    template = config.get("template")
    if not isinstance(template, list):
        raise InteropError(path, "_type: chat needs messages", 1)
    losses.append(Loss("_type: chat with a template list", "langchain-core refuses this file "
                       "(KeyError: 'messages'); imported as the list evidently means, one "
                       "message per item, which LangChain cannot judge"))
    out: list[tuple[Role, str]] = []
    for item in template:
        role = item.get("role") if isinstance(item, dict) else None
        if role not in _ROLES or not isinstance(item.get("content"), str):
            raise InteropError(path, f"chat message {item!r}: needs role and content", 1)
        out.append((_ROLES[role], item["content"]))
    return out


def _output_parser(config: Mapping[str, object], losses: list[Loss]) -> Output | None:
    parser = config.get("output_parser")
    if not parser:
        return None
    kind = parser.get("_type") if isinstance(parser, dict) else None
    if kind != "default":
        losses.append(Loss(f"output_parser: {kind}", "langchain-core refuses output parsers "
                           "other than default (ValueError: Unsupported output parser); the "
                           "parser is kept as metadata langchain.output_parser, the template "
                           "imported"))
    return Output(str(kind) if kind else None, None)


def _fstring(path: str, template: str, losses: list[Loss]) -> tuple[str, list[str]]:
    """A Python format string (as LangChain's f-string formatter reads it) as Jinja."""
    b = Builder()
    names: list[str] = []
    try:
        pieces = list(_FORMATTER.parse(template))
    except ValueError as e:
        raise InteropError(path, f"f-string template: {e}", 1) from None
    for text, field, spec, conversion in pieces:
        b.text(text)
        if field is None:
            continue
        if field == "" or field.isdigit():
            raise InteropError(path, "f-string template: positional fields {} are not "
                               "supported by LangChain", 1)
        if spec or conversion:
            losses.append(Loss("{" + field + ("!" + conversion if conversion else "") +
                               (":" + spec if spec else "") + "}",
                               "format specs and conversions have no exact Jinja equivalent; "
                               "the value is printed plainly"))
        root, rest = _split_field(field)
        if root not in names:
            names.append(root)
        b.output(variable(root) + rest)
    return b.source(), names


def _split_field(field: str) -> tuple[str, str]:
    """``a.b[0]`` -> (``a``, ``.b[0]``), in Jinja syntax (item keys quoted unless digits)."""
    root, rest = field, ""
    for i, ch in enumerate(field):
        if ch in ".[":
            root, rest = field[:i], field[i:]
            break
    out = []
    pos = 0
    while pos < len(rest):
        if rest[pos] == ".":
            end = pos + 1
            while end < len(rest) and rest[end] not in ".[":
                end += 1
            out.append("[" + json.dumps(rest[pos + 1:end]) + "]")
            pos = end
        else:
            end = rest.index("]", pos)
            key = rest[pos + 1:end]
            out.append(f"[{key}]" if key.isdigit() else "[" + json.dumps(key) + "]")
            pos = end + 1
    return root, "".join(out)
