"""Which tool a prompt file was written for, from its name and, where names are ambiguous,
its content.

Detection is the importers' shared front: ``import`` asks it for every file it finds, and a
folder holds more than prompts (samples, configs, licences), so a file found in a folder
must also look like a prompt. Kept apart from the command so the rule has one home.
"""

from __future__ import annotations

import json
import re


def sniff(name: str, text: str, *, named: bool) -> str | None:
    """The format of a file called ``name`` holding ``text``; None when it is no prompt.

    A file named on the command line is taken as a prompt whenever its name fits a
    format; one found in a folder must also look like one (a ``.json`` sample or a
    promptfoo config beside the prompts is data; a ``.txt`` is a prompt with a ``{{``, a
    ``{%`` or a ``---`` line between prompts; a licence or a requirements file is not).
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
    if low.endswith(".txt"):  # promptfoo's, or any text: a template, or --- sections
        prompt = "{{" in text or "{%" in text or \
            re.search(r"^---[ \t]*\r?$", text, re.M) is not None
        return "promptfoo" if named or prompt else None
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
