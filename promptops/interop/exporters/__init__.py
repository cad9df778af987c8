"""One writer per target: ``export(prompt) -> (files, losses)``.

``files`` maps a path relative to the output folder (``.github/prompts/x.prompt.md``,
``.claude/commands/x.md``, ``x.prompty``, ``x.prompt``) to its text; ``losses`` says what the
target cannot express, each with its reason. A file is always written - the best the target
can do - so a lossy export is still useful, and the command exits 1 when there are losses.
"""

from __future__ import annotations

from collections.abc import Callable

from promptops.interop.exporters import claude, dotprompt, prompty, vscode
from promptops.interop.ir import IRPrompt, Loss

Exporter = Callable[[IRPrompt], tuple[dict[str, str], list[Loss]]]

EXPORTERS: dict[str, Exporter] = {
    "vscode": vscode.export,
    "claude": claude.export,
    "prompty": prompty.export,
    "dotprompt": dotprompt.export,
}

__all__ = ["EXPORTERS", "Exporter"]
