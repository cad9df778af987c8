"""One finding in a file (:class:`Problem`), apart from :mod:`promptops.errors`.

``from promptops.errors import Problem`` still works (errors imports this module on first
use): the class is a dataclass, and serve's cold path, which imports errors for its
exception classes, never makes a Problem, so it need not import :mod:`dataclasses`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Problem:
    """One finding in a file, positioned 1-based so editors can jump to it.

    ``code`` is the lint rule the problem belongs to (``PO101`` ...), set where the
    problem is found: the code that finds it knows what it is, so nothing downstream
    has to guess it from the wording.
    """

    path: str
    line: int
    col: int
    message: str
    code: str = ""

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.col}: {self.message}"
