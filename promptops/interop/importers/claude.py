"""Claude Code custom slash commands (``.claude/commands/*.md``): frontmatter + plain text.

Claude Code substitutes, nothing more: ``$ARGUMENTS`` is everything typed after the command,
``$0``..``$9`` and ``$ARGUMENTS[N]`` its whitespace-separated words, **0-based** (``$0`` is
the first word, as Claude Code's current docs say; a missing word is empty), and a body that
uses none of them gets ``\\n\\nARGUMENTS: <value>`` appended when arguments were given. So
the import is one optional string argument, ``ARGUMENTS``, and a template that is the body as
literal text with those substitutions written in Jinja: ``{{ ARGUMENTS }}``,
``{{ ARGUMENTS.split()[1] | default('') }}`` for ``$1`` (the second word), and the appended
form as one expression. What Claude Code does at invocation besides substituting - run
``!`cmd``` and read ``@file`` into the prompt - cannot happen in a served prompt: the text is
kept as written and each occurrence is a loss. An ``@word`` inside Markdown code (a fenced
block or an inline span) is code - a Python decorator, a CSS ``@media``, an npm
``@scope/pkg`` - and not a file reference, so it is no loss.

Frontmatter: ``description`` -> description, ``allowed-tools`` -> tools, ``model`` -> model,
``argument-hint`` -> the argument's description, ``name`` -> title; every other key is
metadata (``allowed_tools``, with an underscore, is not Claude Code's key and is kept there).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from promptops.interop.importers import _common
from promptops.interop.ir import Argument, IRPrompt, Json, Loss, Message, Model, Text, Tool
from promptops.interop.jinja_build import Builder

_VAR = re.compile(r"\$(ARGUMENTS\[([0-9]+)\]|ARGUMENTS|([0-9]))")
_BANG = re.compile(r"!`[^`\n]*`")
_AT_FILE = re.compile(r"(?:(?<=\s)|^)@[A-Za-z0-9_.~/$-]*[A-Za-z0-9_/]", re.M)
# Markdown code: fenced blocks (``` or ~~~, to the closing fence or the end) and inline spans
_CODE = re.compile(r"^[ \t]*(`{3,}|~{3,})[^\n]*\n.*?(?:^[ \t]*\1[ \t]*$|\Z)|`[^`\n]+`",
                   re.M | re.S)
ARGUMENT = "ARGUMENTS"
_KNOWN = ("description", "allowed-tools", "model", "argument-hint", "name")
# Claude Code's docs write ``argument-hint: [pr-number] [priority]``: to YAML that is two
# flow sequences (an error), and ``[issue]`` alone a list. Claude Code reads the value as
# text (its runtime coerces it), so a bracketed value is quoted before the YAML parse, on
# its own line: every other line and column stays where the file has it.
_BRACKETED_HINT = re.compile(r"^(argument-hint[ \t]*:[ \t]*)([\[{][^\r\n]*?)[ \t]*(?=\r?$)",
                             re.M)


def _hint_as_text(front_text: str) -> str:
    return _BRACKETED_HINT.sub(lambda m: m.group(1) + json.dumps(m.group(2)), front_text)


def parse(path: str, text: str, siblings: Mapping[str, str]) -> list[IRPrompt]:
    front_text, body, body_line = _common.markdown_frontmatter(text)
    front: dict[str, Json] = {}
    if front_text is not None:
        front = _common.mapping(path, _common.load_yaml(path, _hint_as_text(front_text), 2),
                                "frontmatter")
    losses = _invocation_losses(body, body_line)
    notes: list[str] = []
    template = _template(body)
    hint = front.get("argument-hint")
    arg = Argument(ARGUMENT, "string", False, "",
                   "What is typed after the command" + (f": {hint}" if hint else "") + ".")
    meta = {k: v for k, v in front.items() if k not in _KNOWN}
    if "allowed_tools" in front:
        notes.append("allowed_tools (with an underscore) is not Claude Code's key "
                     "(allowed-tools): kept as metadata, not as tools")
    if hint is not None:
        meta["argument-hint"] = hint
    model = Model(str(front["model"])) if front.get("model") else None
    name = front.get("name")
    return [IRPrompt(
        name=_common.prompt_name(path, [".md"]), source=path, ecosystem="claude",
        messages=(Message("user", (Text(template),)),), arguments=(arg,),
        whitespace="standalone", title=name if isinstance(name, str) else None,
        description=front.get("description") if isinstance(front.get("description"), str)
        else None,
        model=model, tools=tuple(Tool(t) for t in _common.tools_list(front.get("allowed-tools"))),
        metadata=meta, losses=tuple(losses), notes=tuple(notes))]


def _template(body: str) -> str:
    b = Builder()
    if not _VAR.search(body):
        b.text(body)
        b.output(f"'\\n\\nARGUMENTS: ' ~ {ARGUMENT} if {ARGUMENT} else ''")
        return b.source()
    pos = 0
    for m in _VAR.finditer(body):
        b.text(body[pos:m.start()])
        if m.group(1) == ARGUMENT:
            b.output(ARGUMENT)
        else:
            index = int(m.group(2) if m.group(2) is not None else m.group(3))  # 0-based
            b.output(f"{ARGUMENT}.split()[{index}] | default('')")
        pos = m.end()
    b.text(body[pos:])
    return b.source()


def file_references(body: str) -> list[re.Match[str]]:
    """The ``@path`` references Claude Code reads into the prompt, outside Markdown code (in
    code, ``@word`` is a decorator, a CSS at-rule, an npm scope - not a file reference)."""
    code = [(c.start(), c.end()) for c in _CODE.finditer(body)]
    return [m for m in _AT_FILE.finditer(body) if not any(a <= m.start() < b for a, b in code)]


def _invocation_losses(body: str, first_line: int) -> list[Loss]:
    losses = []
    for m in _BANG.finditer(body):
        losses.append(Loss(m.group(), "Claude Code runs this shell command when the command is "
                           "invoked and puts its output here; a served prompt keeps the text",
                           first_line + body.count("\n", 0, m.start())))
    for m in file_references(body):
        losses.append(Loss(m.group(), "Claude Code reads this file into the prompt when the "
                           "command is invoked; a served prompt keeps the reference",
                           first_line + body.count("\n", 0, m.start())))
    return sorted(losses, key=lambda loss: loss.line or 0)
