"""What a rule reports, and what the outputs print.

Rules yield bare :class:`Hit` tuples and never know their own level or whether the
user silenced them: the engine attaches code, level and fixability from the registry,
so a rule module stays a pure function of the package.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, fields
from operator import attrgetter
from typing import Any, NamedTuple


class Hit(NamedTuple):
    path: str
    line: int
    col: int
    message: str


@dataclass(frozen=True, order=True)
class Finding:
    path: str
    line: int
    col: int
    code: str
    name: str
    level: str  # "error" | "warning" | "info" (advice: shown when selected, never fails)
    message: str
    fixable: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "line": self.line,
            "column": self.col,
            "code": self.code,
            "name": self.name,
            "level": self.level,
            "message": self.message,
            "fixable": self.fixable,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Finding:
        return cls(
            data["path"], data["line"], data["column"], data["code"], data["name"],
            data["level"], data["message"], data["fixable"],
        )

    def fingerprint(self, line_text: str) -> str:
        """Stable across line moves: the code, file, message and the line's own text."""
        key = "\0".join((self.code, self.path, self.message, line_text.strip()))
        return hashlib.sha256(key.encode()).hexdigest()[:32]


#: ``sorted(findings, key=ORDER)`` is ``sorted(findings)``: the dataclass's order compares
#: the fields as a tuple, but through a Python ``__lt__`` per comparison, which was a fifth
#: of an incremental run's CPU at 10,000 findings; this builds each tuple once, in C.
ORDER = attrgetter(*(f.name for f in fields(Finding)))
