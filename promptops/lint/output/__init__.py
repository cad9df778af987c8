"""Output formats of `promptops lint`; each renders findings to one string."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


class Texts(dict[str, str]):
    """path -> text, read on first use: only text excerpts and SARIF fingerprints need a
    finding's line, so printing 10,000 findings as JSON reads no file at all."""

    def __init__(self, read: Callable[[str], str]) -> None:
        super().__init__()
        self._read = read

    def __missing__(self, path: str) -> str:
        self[path] = text = self._read(path)
        return text


@dataclass(frozen=True)
class Report:
    """Everything a format may need besides the findings."""

    package: str  # label of the source that was linted
    prefix: str  # package folder relative to the repository root ("." at the root)
    display: str  # package folder as the user should see it (relative to cwd)
    texts: dict[str, str]  # path -> text, for excerpts and fingerprints
    listed: frozenset[str] = frozenset()  # codes --select named: never summarised

    def repo_path(self, path: str) -> str:
        return path if self.prefix in ("", ".") else f"{self.prefix}/{path}"

    def shown_path(self, path: str) -> str:
        return path if self.display in ("", ".") else f"{self.display}/{path}"

    def line_text(self, path: str, line: int) -> str:
        lines = self.texts[path].split("\n") if isinstance(self.texts, Texts) else \
            self.texts.get(path, "").split("\n")
        return lines[line - 1].rstrip("\r") if 0 < line <= len(lines) else ""
