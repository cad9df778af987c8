"""One writer per target: ``export(prompt) -> (files, losses)``.

``files`` maps a path relative to the output folder (``.github/prompts/x.prompt.md``,
``.claude/commands/x.md``, ``x.prompty``, ``x.prompt``) to its text - the prompt's own
file first, then any package file it references (bytes) - and ``losses`` says what the
target cannot express, each with its reason. A lossy export writes the best file the
target can do, so it is still useful; when the target would not run the prompt as the
package does (VS Code or Claude Code would send Jinja logic verbatim, Prompty cannot load
an include) ``files`` is empty: the prompt is refused, its reason among the losses. The
command exits 1 on any loss or refusal.
"""

from __future__ import annotations

from collections.abc import Callable

from promptops.interop.exporters import claude, dotprompt, prompty, vscode
from promptops.interop.ir import IRPrompt, Loss

Exporter = Callable[[IRPrompt], tuple[dict[str, str | bytes], list[Loss]]]

EXPORTERS: dict[str, Exporter] = {
    "vscode": vscode.export,
    "claude": claude.export,
    "prompty": prompty.export,
    "dotprompt": dotprompt.export,
}

__all__ = ["EXPORTERS", "Exporter"]
