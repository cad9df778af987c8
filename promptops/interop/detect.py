"""Which tool a prompt file was written for, from its name and, where names are ambiguous,
its content.

Detection is the importers' shared front: ``import`` asks it for every file it finds, and a
folder holds more than prompts (samples, configs, licences), so a file found in a folder
must also look like a prompt. Kept apart from the command so the rule has one home.
"""

from __future__ import annotations

import json
import re


def sniff(name: str, text: str, *, named: bool, place: str = "") -> str | None:
    """The format of a file called ``name`` holding ``text``; None when it is no prompt.

    A file named on the command line is taken as a prompt whenever its name fits a
    format; one found in a folder must also look like one (a ``.json`` sample or a
    promptfoo config beside the prompts is data; a ``.txt`` is a prompt by
    :func:`plain_prompt`). ``place`` is a folder entry's path from the folder named, that
    folder's own name first (its name alone when empty).
    """
    low = name.lower()
    if low.endswith(".prompty"):
        return "prompty"
    if low.endswith(".prompt.md"):
        return "vscode"
    if low.endswith(".prompt"):
        return "dotprompt"
    if low.endswith(".md"):  # VS Code reads only *.prompt.md: a plain .md is a command
        return "claude"
    if low.endswith((".j2", ".jinja", ".jinja2", ".njk", ".nunjucks")):
        return "promptfoo"
    if low.endswith(".txt"):  # promptfoo's, or any text a prompt folder holds
        return "promptfoo" if named or plain_prompt(place or name, text) else None
    if low.endswith(".json"):
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):  # a Nunjucks-templated chat array is no JSON yet
            return "promptfoo" if named or "{{" in text or "{%" in text else None
        if isinstance(data, dict) and "_type" in data:
            return "langchain"
        return "promptfoo" if named or _chat(data) else None
    if low.endswith((".yaml", ".yml")):
        if _LANGCHAIN_YAML.search(text):  # a top-level key: ``object_type:`` deeper is data
            return "langchain"
        return "promptfoo" if named or _yaml_chat(text) else None
    return None


def prompt_place(place: str) -> bool:
    """Whether a path says it holds a prompt: the word ``prompt`` or ``prompts`` in a folder
    or file name (``prompts/``, ``system_prompt.txt``, ``systemPrompt.txt``; not
    ``promptfoo/``). How Dotprompt, VS Code and the agent frameworks keep prompt files: by
    place and name, never by their tags (docs/interop.md, "Which .txt in a folder")."""
    return any(w.lower() in ("prompt", "prompts") for w in _WORD.findall(place))


def plain_prompt(place: str, text: str) -> bool:
    """Whether a ``.txt`` found in a folder is a prompt: its place says so or it holds a
    template tag, and it is no licence, not empty, not binary. A ``---`` line alone says
    nothing: it is a licence's line between languages as often as promptfoo's separator."""
    if not text.strip() or "\0" in text or _LICENCE.match(text) is not None:
        return False
    return "{{" in text or "{%" in text or prompt_place(place)


_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
# A licence's first line (Markdown marks allowed): its title, its copyright line or its
# grant, as SPDX's texts and the corpus's 189 licence files begin.
_LICENCE = re.compile(
    r"[\s#*_>]*(?:the\s+)?(?:(?:mit|apache|bsd|isc|gnu|mozilla|eclipse|boost|zlib|unlicense|"
    r"mulan|0bsd)\b[^\n]{0,80}\blicen[cs]e\b|creative\s+commons\b|"
    r"attribution(?:-\w+)*\s+\d\.\d\s+international|copyright\s+(?:\(c\)|©|\d{4})|"
    r"permission\s+is\s+hereby\s+granted|this\s+is\s+free\s+and\s+unencumbered|"
    r"this\s+(?:project|software|repository)\s+is\s+licen[cs]ed\s+under)", re.I)
_LANGCHAIN_YAML = re.compile(r"^[\"']?_type[\"']?[ \t]*:", re.M)


def _chat(data: object) -> bool:
    return isinstance(data, list) and bool(data) and all(
        isinstance(m, dict) and "role" in m for m in data)


def _yaml_chat(text: str) -> bool:
    """A YAML chat array (``- role: user``) by its first entry, without parsing."""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("#") and stripped != "---":
            return stripped.replace(" ", "").startswith(("-role:", "-content:"))
    return False
