"""The one error an importer or exporter raises: a file it cannot read at all, with a position.

A construct that can be read but not expressed exactly is never an error - it is a
:class:`~promptops.interop.ir.Loss` and the prompt is still imported. This error is for input
that is not a prompt of the claimed format (YAML that does not parse, a JSON chat array whose
items have no role...). It names the file, line and column, as every promptops error does.
It is a :class:`~promptops.errors.PromptopsError` (exit 1, like a package that does not load).
"""

from __future__ import annotations

from promptops.errors import PromptopsError


class InteropError(PromptopsError):
    """``path:line:col: message`` (line and column 1-based; 0 when the position is the file)."""

    def __init__(self, path: str, message: str, line: int = 0, col: int = 0) -> None:
        self.path, self.message, self.line, self.col = path, message, line, col
        super().__init__(str(self))

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.col}: {self.message}"
