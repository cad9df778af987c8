"""One translator per ecosystem: ``parse(path, text, siblings) -> list[IRPrompt]``.

Each module knows one format and nothing else (format detection is the command's job):
``path`` is the file's name as the user gave it (used for names and messages), ``text`` its
content, ``siblings`` the other files of the prompt by relative name (Dotprompt partials,
Prompty ``${file:...}`` samples, LangChain ``template_path`` and example files). A file that
is not a prompt of the format raises :class:`~promptops.interop.errors.InteropError`; anything
that can be read but not expressed exactly is a :class:`~promptops.interop.ir.Loss`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from promptops.interop.importers import claude, dotprompt, langchain, promptfoo, prompty, vscode
from promptops.interop.ir import IRPrompt

Importer = Callable[[str, str, Mapping[str, str]], list[IRPrompt]]

IMPORTERS: dict[str, Importer] = {
    "prompty": prompty.parse,
    "dotprompt": dotprompt.parse,
    "vscode": vscode.parse,
    "claude": claude.parse,
    "promptfoo": promptfoo.parse,
    "langchain": langchain.parse,
}

__all__ = ["IMPORTERS", "Importer"]
