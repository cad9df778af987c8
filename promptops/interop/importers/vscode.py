"""VS Code / GitHub Copilot prompt files (``.prompt.md``): frontmatter + a Markdown body.

VS Code sends the body verbatim with its variables replaced
(https://code.visualstudio.com/docs/copilot/customization/prompt-files):

* ``${input:name}`` / ``${input:name:placeholder}`` - VS Code asks the user; each is a
  required argument ``name`` (the placeholder becomes its description; it is only the hint
  VS Code shows, the value replaces the whole variable).
* editor variables - ``${selection}``, ``${selectedText}``, ``${file}``, ``${fileBasename}``,
  ``${fileDirname}``, ``${fileBasenameNoExtension}``, ``${workspaceFolder}``,
  ``${workspaceFolderBasename}`` - VS Code fills them from the editor; an MCP client has no
  editor, so each is a required argument of that name, described as what VS Code would put
  there. (If an input has the same name, the input is ``input:name``.)
* anything else in ``${...}``, and every ``{{ }}``, is text: it reaches the model as written,
  so it is escaped for Jinja.

* ``argument-hint`` - VS Code shows it in the chat box; what the user types after the
  command is sent with the prompt as their request. It becomes the optional argument
  ``input`` (described by the hint), rendered as a further user message when given, so an
  MCP client can pass it.

A frontmatter whose ``---`` is never closed is not frontmatter (the whole file is the body).
Frontmatter: ``description``, ``tools`` (names), ``model``, ``name`` (the prompt's name when it
is a valid one); ``mode``/``agent`` and any other key travel as metadata.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from promptops.interop.importers import _common
from promptops.interop.ir import Argument, IRPrompt, Json, Message, Model, Text, Tool
from promptops.interop.jinja_build import Builder, variable

_VAR = re.compile(r"\$\{(input:([^}:]+)(?::([^}]*))?|[A-Za-z]+)\}")
EDITOR_VARIABLES = {
    "workspaceFolder": "the path of the workspace folder",
    "workspaceFolderBasename": "the name of the workspace folder",
    "selection": "the text selected in the editor",
    "selectedText": "the text selected in the editor",
    "file": "the path of the file open in the editor",
    "fileBasename": "the file name of the file open in the editor",
    "fileDirname": "the folder of the file open in the editor",
    "fileBasenameNoExtension": "the file name, without extension, of the file open in the editor",
}
_PROMPT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}\Z")
_KNOWN = ("description", "tools", "model", "name", "argument-hint")
TYPED = "input"  # the argument that carries what is typed after the command (argument-hint)


def parse(path: str, text: str, siblings: Mapping[str, str]) -> list[IRPrompt]:
    front_text, body, _ = _common.markdown_frontmatter(text)
    front: dict[str, Json] = {}
    notes: list[str] = []
    if front_text is not None:
        front = _common.mapping(path, _common.load_yaml(path, front_text, 2), "frontmatter")
    elif text.startswith("---"):
        notes.append("the frontmatter's closing --- is missing, so VS Code reads the whole "
                     "file as the body; so does the import")
    inputs = {m.group(2) for m in _VAR.finditer(body) if m.group(2) is not None}
    editor = {m.group(1) for m in _VAR.finditer(body)
              if m.group(2) is None and m.group(1) in EDITOR_VARIABLES}
    source, arguments = _substituted(body, editor)
    if editor:
        notes.append(f"editor variables {sorted(editor)} become arguments: an MCP client has "
                     "no editor to fill them from")
    if inputs & editor:
        notes.append(f"inputs {sorted(inputs & editor)} share a name with an editor variable: "
                     "imported as input:<name>")
    given = front.get("name")
    name = given if isinstance(given, str) and _PROMPT_NAME.match(given) else \
        _common.prompt_name(path, [".prompt.md", ".md"])
    meta = {k: v for k, v in front.items() if k not in _KNOWN}
    if isinstance(given, str) and given != name:
        meta["name"] = given
    model = Model(str(front["model"])) if front.get("model") else None
    messages = [Message("user", (Text(source),))]
    _argument_hint(front.get("argument-hint"), arguments, messages, notes)
    return [IRPrompt(
        name=name, source=path, ecosystem="vscode",
        messages=tuple(messages),
        arguments=tuple(arguments.values()), whitespace="standalone",
        description=front.get("description") if isinstance(front.get("description"), str)
        else None,
        model=model, tools=tuple(Tool(t) for t in _common.tools_list(front.get("tools"))),
        metadata=meta, notes=tuple(notes))]


def _substituted(body: str, editor: set[str]) -> tuple[str, dict[str, Argument]]:
    """The body as Jinja, with each ``${input:x}`` and editor variable an argument."""
    arguments: dict[str, Argument] = {}
    b = Builder()
    pos = 0
    for m in _VAR.finditer(body):
        if m.group(2) is not None:
            name = m.group(2) if m.group(2) not in editor else "input:" + m.group(2)
            hint = m.group(3)
            arg = Argument(name, "string", True,
                           description=hint or f"VS Code asks for {m.group(2)}.")
        elif m.group(1) in EDITOR_VARIABLES:
            name = m.group(1)
            arg = Argument(name, "string", True, description=f"In VS Code, "
                           f"{EDITOR_VARIABLES[name]} (${{{name}}}).")
        else:
            continue
        b.text(body[pos:m.start()])
        b.output(variable(name))
        pos = m.end()
        if name not in arguments or (arg.description and not arguments[name].description):
            arguments.setdefault(name, arg)
    b.text(body[pos:])
    return b.source(), arguments


def _argument_hint(hint: Json, arguments: dict[str, Argument], messages: list[Message],
                   notes: list[str]) -> None:
    """VS Code's ``argument-hint``: what is typed after the command becomes an optional
    argument, sent as a user message after the prompt when given."""
    if not (isinstance(hint, str | int | float) and str(hint).strip()):
        return
    typed = next(n for n in (TYPED, "user_input", "input:input") if n not in arguments)
    arguments[typed] = Argument(typed, "string", False, "", f"What the user types after "
                                f"the command in VS Code: {str(hint).strip()}")
    typed_text = Builder()
    typed_text.output(variable(typed))
    messages.append(Message("user", (Text(typed_text.source()),), drop_blank=True))
    notes.append(f"argument-hint: what is typed after the command is the optional argument "
                 f"{typed!r}, sent as a user message after the prompt when given")
