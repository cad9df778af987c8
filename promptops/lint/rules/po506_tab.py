"""A tab character in a package file.

Why: YAML forbids tabs for indentation, and in prompt text a tab renders differently
in every viewer, so what a reviewer sees is not what the model gets. Use spaces.
Not fixed automatically: the right number of spaces depends on intent.

Fails::

    text: "Columns:\\tname\\tvalue"

Passes::

    text: "Columns: name, value"
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from promptops.lint.problem import Hit
from promptops.lint.rules._text import lines

CODE, NAME, LEVEL, NEEDS = "PO506", "tab", "warning", "raw"


def check(ctx: Any) -> Iterator[Hit]:
    for path, n, line in lines(ctx):
        stripped = line.rstrip(" \t")  # trailing tabs are PO504's
        at = stripped.find("\t")
        if at >= 0:
            yield Hit(path, n, at + 1, "tab character; use spaces")
