"""The documented substitution grammar of VS Code prompt files and Claude Code commands.

Neither tool has an engine we can run here, so the tests check written files against what
their documentation says the tool does with the text, written down as small functions:

VS Code (https://code.visualstudio.com/docs/copilot/customization/prompt-files, "Prompt file
format" / "Body"): optional YAML frontmatter between ``---`` lines; in the body
``${input:variableName}`` and ``${input:variableName:placeholder}`` ask the user for a value
(the placeholder is the hint shown) and every occurrence of one name gets that value; the
editor variables ``${workspaceFolder}``, ``${workspaceFolderBasename}``, ``${selection}``,
``${selectedText}``, ``${file}``, ``${fileBasename}``, ``${fileDirname}``,
``${fileBasenameNoExtension}`` are replaced from the editor; a relative Markdown link
attaches the file it names; all other text is sent as written.

Claude Code (https://code.claude.com/docs/en/skills, "Pass arguments to skills" - custom
commands in ``.claude/commands/`` substitute as skills do - and, for ``@`` and ``!``,
https://code.claude.com/docs/en/slash-commands): optional YAML frontmatter; ``$ARGUMENTS``
is the whole text typed after the command, ``$ARGUMENTS[N]`` (shorthand ``$N``) its N-th
argument, **0-based**, split like a shell splits words (quotes group); when the body uses
none of them the text is appended as ``ARGUMENTS: <text>``; an ``@path`` reads a file and a
``!`cmd``` line runs a command; all other text is sent as written.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from typing import Any

import yaml

EDITOR = ("workspaceFolder", "workspaceFolderBasename", "selection", "selectedText", "file",
          "fileBasename", "fileDirname", "fileBasenameNoExtension")
VSCODE_VARIABLE = re.compile(r"\$\{(?:input:(?P<name>[^}:]+)(?::(?P<hint>[^}]*))?|"
                             r"(?P<editor>" + "|".join(EDITOR) + r"))\}")
CLAUDE_ARGUMENT = re.compile(r"\$ARGUMENTS\[(?P<index>\d+)\]|\$ARGUMENTS|\$(?P<short>\d)")
TEMPLATE_SYNTAX = re.compile(r"\{\{|\{%|\{#")  # what opens a Jinja output, tag or comment


def split_file(text: str) -> tuple[dict[str, Any], str]:
    """(frontmatter, body): the frontmatter must be YAML mapping both tools can parse."""
    if not text.startswith("---\n"):
        return {}, text
    end = text.find("\n---\n", 3)
    assert end >= 0, "an unterminated frontmatter"
    front = yaml.safe_load(text[4:end + 1]) or {}
    assert isinstance(front, dict), front
    return front, text[end + 5:]


def vscode_names(body: str) -> list[str]:
    """The variables VS Code replaces in ``body``; fails on an ``${input:`` that is not one
    (other ``${...}`` text is no variable VS Code documents, and is sent as written)."""
    for m in re.finditer(r"\$\{input:[^}]*\}?", body):
        assert VSCODE_VARIABLE.match(m.group()), f"{m.group()!r} is a malformed input variable"
    return [m.group("name") or m.group("editor") for m in VSCODE_VARIABLE.finditer(body)]


def vscode_substitute(body: str, values: Mapping[str, str]) -> str:
    """What VS Code sends: each variable replaced by the value given for its name."""
    def value(m: re.Match[str]) -> str:
        name = m.group("name") or m.group("editor")
        return values.get(name, values.get(f"input:{name}", ""))
    vscode_names(body)
    return VSCODE_VARIABLE.sub(value, body)


def claude_text(values: list[str]) -> str:
    """The argument text a user types for these values, one shell word each."""
    return " ".join(shlex.quote(v) for v in values)


def claude_substitute(body: str, typed: str) -> str:
    """What Claude Code sends for the command typed with the text ``typed``."""
    try:
        words = shlex.split(typed)
    except ValueError:  # an unbalanced quote: the words as whitespace separates them
        words = typed.split()
    if not CLAUDE_ARGUMENT.search(body):
        return body + (f"\n\nARGUMENTS: {typed}" if typed else "")

    def value(m: re.Match[str]) -> str:
        index = m.group("index") or m.group("short")
        if index is None:
            return typed
        return words[int(index)] if int(index) < len(words) else ""
    return CLAUDE_ARGUMENT.sub(value, body)
