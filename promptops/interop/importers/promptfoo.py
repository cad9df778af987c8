"""promptfoo prompt files: ``.txt`` with ``---`` alternatives, JSON chat arrays, Nunjucks files.

promptfoo's file rules (``src/prompts/processors``, see the corpus NOTES.md), reproduced:

* ``.txt``: a line whose trimmed text is ``---`` separates *alternative prompts* (promptfoo
  tests each); each is trimmed and empty ones dropped. One IRPrompt per alternative.
* ``.json`` that parses: a chat array whose every string is a Nunjucks template, rendered on
  its own - one message per item, each content string translated.
* anything else (``.j2``, ``.md``, JSON with ``{% %}`` in it): the whole text is one Nunjucks
  template. When it is JSON once rendered (the tags sit between array items and inside
  strings) it is a chat: a ``{% for %}`` around messages becomes a Loop over its argument
  (promptfoo's ``_conversation``), ``{{ }}`` inside strings stay in the message text.
  Otherwise it is one user message.

Every variable is optional (Nunjucks renders a missing one as empty): ``default: ""``, or
``[]`` for one the template loops over. Roles: ``model`` (Gemini) is ``assistant``. Gemini
``parts`` that are not text (``functionCall``...) are sent by promptfoo as structured parts;
the IR has text only, so they become their JSON text, which is a loss.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from promptops.interop import nunjucks
from promptops.interop.errors import InteropError
from promptops.interop.hbs_layout import js_trim
from promptops.interop.importers import _common
from promptops.interop.ir import (
    Argument,
    IRPrompt,
    Json,
    JsonObject,
    Loop,
    Loss,
    Message,
    MessageItem,
    Role,
    Text,
)
from promptops.interop.jinja_build import Builder
from promptops.sandbox.jinja_source import tokenize

_ROLES: dict[str, Role] = {"system": "system", "user": "user", "assistant": "assistant",
                           "model": "assistant"}
_SENTINEL = re.compile("\ue000(\\d+)\ue001")  # a {{ }} inside a JSON string
_RAW = re.compile('"\ue002(\\d+)\ue003"')  # a {{ }} where a JSON value goes
_FOR = re.compile(r"\s*for\s+([A-Za-z_]\w*)\s+in\s+([A-Za-z_]\w*)\s*\Z")


class _NotChat(Exception):
    """The template is not a JSON chat array: it is one text prompt."""


def parse(path: str, text: str, siblings: Mapping[str, str]) -> list[IRPrompt]:
    stem = _common.prompt_name(path, [".txt", ".json", ".j2", ".jinja", ".jinja2", ".njk", ".md",
                                      ".yaml", ".yml"])
    lower = path.lower()
    if lower.endswith(".txt"):
        raws = _alternatives(text)
        notes = [f"{len(raws)} alternative prompts separated by ---: one prompt each"] \
            if len(raws) > 1 else []
        return [_prompt(f"{stem}-{i + 1}" if len(raws) > 1 else stem, path, raw, notes)
                for i, raw in enumerate(raws)]
    if lower.endswith((".yaml", ".yml")):
        data = _common.load_yaml(path, text)
        return [_json_prompt(stem, path, data)]
    if lower.endswith(".json"):
        try:
            data = json.loads(text)
        except ValueError:
            return [_prompt(stem, path, text, [])]
        return [_json_prompt(stem, path, data)]
    return [_prompt(stem, path, text, [])]


def _alternatives(text: str) -> list[str]:
    prompts: list[str] = []
    buffer: list[str] = []
    for line in re.split(r"\r?\n", text):
        if line.strip() == "---":
            prompts.append(js_trim("\n".join(buffer)))
            buffer = []
        else:
            buffer.append(line)
    prompts.append(js_trim("\n".join(buffer)))
    return [p for p in prompts if p]


# --------------------------------------------------------------------------- text templates

def _prompt(name: str, path: str, source: str, notes: list[str]) -> IRPrompt:
    losses: list[Loss] = []
    try:
        messages, loop_vars = _templated_chat(source, losses)
        notes = [*notes, "the template renders a JSON chat array: one message per item"]
    except _NotChat:
        tr = nunjucks.to_jinja(source)
        losses += [Loss(*item) for item in tr.losses]
        messages, loop_vars = [Message("user", (Text(tr.source),))], set()
    return _finish(name, path, messages, loop_vars, losses, notes)


def _templated_chat(source: str, losses: list[Loss]) -> tuple[list[MessageItem], set[str]]:
    """A template whose rendering is a JSON chat array, as messages (or _NotChat)."""
    exprs: list[str] = []
    loops: list[tuple[str, str]] = []
    out: list[str] = []
    in_string = False
    for tok in tokenize(source):
        text = source[tok.start:tok.end]
        if tok.kind == "text":
            in_string = _string_state(text, in_string)
            out.append(text)
        elif tok.kind == "var":
            exprs.append(source[tok.open_end:tok.close_start].strip())
            n = len(exprs) - 1
            out.append(f"\ue000{n}\ue001" if in_string else f'"\ue002{n}\ue003"')
        elif tok.kind == "block" and not in_string:
            inner = source[tok.open_end:tok.close_start]
            m = _FOR.match(inner)
            if m:
                loops.append((m.group(1), m.group(2)))
                out.append(f'"\ue004{len(loops) - 1}\ue005",')
            elif inner.strip() == "endfor":
                out.append('"\ue006",')
            else:
                raise _NotChat
        else:
            raise _NotChat
    try:
        data = json.loads("".join(out))
    except ValueError:
        raise _NotChat from None
    if not isinstance(data, list) or not data:
        raise _NotChat
    items: list[MessageItem] = []
    loop_vars: set[str] = set()
    open_loop: tuple[str, str, list[Message]] | None = None
    for entry in data:
        if isinstance(entry, str) and entry.startswith("\ue004"):
            if open_loop is not None:
                raise _NotChat  # nested loops
            item, arg = loops[int(entry[1:-1])]
            open_loop = (item, arg, [])
            continue
        if entry == "\ue006":
            if open_loop is None:
                raise _NotChat
            items.append(Loop(open_loop[1], open_loop[0], tuple(open_loop[2])))
            loop_vars.add(open_loop[1])
            open_loop = None
            continue
        if not isinstance(entry, dict) or "role" not in entry:
            raise _NotChat
        message = _message(entry, exprs, losses)
        if open_loop is not None:
            open_loop[2].append(message)
        else:
            items.append(message)
    if open_loop is not None:
        raise _NotChat
    return items, loop_vars


def _string_state(text: str, in_string: bool) -> bool:
    """Whether JSON text left off inside a string literal."""
    escaped = False
    for ch in text:
        if escaped:
            escaped = False
        elif ch == "\\" and in_string:
            escaped = True
        elif ch == '"':
            in_string = not in_string
    return in_string


def _message(entry: JsonObject, exprs: list[str], losses: list[Loss]) -> Message:
    role = entry["role"]
    if not isinstance(role, str) or _SENTINEL.search(role) or role not in _ROLES:
        raise InteropError("", f"role {role!r} is not system, user, assistant or model")
    if isinstance(entry.get("content"), str):
        return Message(_ROLES[role], (Text(_text(entry["content"], exprs, losses)),))
    if isinstance(entry.get("parts"), list):
        pieces = []
        for part in entry["parts"]:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                pieces.append(_text(part["text"], exprs, losses))
            else:
                kind = next(iter(part), "part") if isinstance(part, dict) else "part"
                losses.append(Loss(f"{role} {kind}", "promptfoo sends this Gemini part as "
                                   "structured data; the IR carries it as its JSON text"))
                pieces.append(_json_text(part, exprs, losses))
        return Message(_ROLES[role], (Text("".join(pieces)),))
    losses.append(Loss(f"{role} content", "structured content (not a string) is carried as "
                       "its JSON text"))
    return Message(_ROLES[role], (Text(_json_text(entry.get("content"), exprs, losses)),))


class _PreTranslated(str):
    """A string that is already Jinja source (a JSON file's string, translated)."""


def _text(value: str, exprs: list[str], losses: list[Loss]) -> str:
    """A JSON string's decoded text with its {{ }} put back, as a Jinja template."""
    if isinstance(value, _PreTranslated):
        return str(value)
    if "\ue002" in value:
        raise _NotChat
    b = Builder()
    pos = 0
    for m in _SENTINEL.finditer(value):
        b.text(value[pos:m.start()])
        b.output(_expr(exprs[int(m.group(1))], losses))
        pos = m.end()
    b.text(value[pos:])
    return b.source()


def _json_text(value: Json, exprs: list[str], losses: list[Loss]) -> str:
    """``json.dumps`` of a value (as the judge writes non-text parts), {{ }} put back."""
    dumped = json.dumps(value, ensure_ascii=False)
    b = Builder()
    pos = 0
    for m in re.finditer(f"{_SENTINEL.pattern}|{_RAW.pattern}", dumped):
        b.text(dumped[pos:m.start()])
        b.output(_expr(exprs[int(m.group(1) or m.group(2))], losses))
        pos = m.end()
    b.text(dumped[pos:])
    return b.source()


def _expr(expr: str, losses: list[Loss]) -> str:
    found: list[tuple[str, str]] = []
    out = nunjucks.expression(expr, found)
    losses += [Loss(*item) for item in found]
    return out


# --------------------------------------------------------------------------- JSON files

def _json_prompt(name: str, path: str, data: Json) -> IRPrompt:
    """A parsed JSON/YAML prompt: every string in it is a template of its own."""
    losses: list[Loss] = []
    if not (isinstance(data, list) and data and all(isinstance(m, dict) and "role" in m
                                                    for m in data)):
        raise InteropError(path, "a JSON prompt file must be a chat array of "
                           "{role, content} messages", 1)
    messages: list[MessageItem] = []
    for entry in data:
        role = entry["role"]
        if not isinstance(role, str) or role not in _ROLES:
            raise InteropError(path, f"role {role!r} is not system, user, assistant or model", 1)
        tr = _translate_strings(entry, losses)
        messages.append(_message(tr, [], losses))
    return _finish(name, path, messages, set(), losses, [])


def _translate_strings(value: Json, losses: list[Loss]) -> Json:
    """Each string template translated to Jinja (and marked as already-Jinja text)."""
    if isinstance(value, str):
        tr = nunjucks.to_jinja(value)
        losses += [Loss(*item) for item in tr.losses]
        return _PreTranslated(tr.source)
    if isinstance(value, list):
        return [_translate_strings(v, losses) for v in value]
    if isinstance(value, dict):
        return {k: (_translate_strings(v, losses) if k != "role" else v)
                for k, v in value.items()}
    return value


def _finish(name: str, path: str, messages: list[MessageItem], loop_vars: set[str],
            losses: list[Loss], notes: list[str]) -> IRPrompt:
    used: list[str] = []
    for item in messages:
        inner = item.messages if isinstance(item, Loop) else [item]
        if isinstance(item, Loop):
            used.append(item.argument)
        for m in inner:
            if isinstance(m, Message) and m.template is not None:
                names = _common.JinjaNames(m.template)
                used += [n for n in names.ordered if n not in used]
                loop_vars |= names.iterated
    loop_items = {item.item for item in messages if isinstance(item, Loop)}
    arguments: list[Argument] = []
    for n in used:
        if n in loop_items or any(a.name == n for a in arguments):
            continue
        arguments.append(_common.optional_argument(
            n, "array" if n in loop_vars else "string", notes))
    if arguments:
        notes.append("Nunjucks renders a missing variable as empty: every argument is "
                     "optional, with the value that renders the same")
    return IRPrompt(name=name, source=path, ecosystem="promptfoo", messages=tuple(messages),
                    arguments=tuple(arguments), whitespace="jinja", losses=tuple(losses),
                    notes=tuple(notes))
