"""A line ends with spaces or tabs.

Why: invisible in review, yet part of the rendered prompt inside ``text: |`` blocks,
and noise in every diff. ``--fix`` removes it.

Fails::

    text: |
      Summarise this.␠␠

Passes::

    text: |
      Summarise this.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from promptops.lint.problem import Hit
from promptops.lint.rules._text import lines

CODE, NAME, LEVEL, NEEDS, FIXABLE = "PO504", "trailing-whitespace", "warning", "raw", True


def check(ctx: Any) -> Iterator[Hit]:
    for path, n, line in lines(ctx):
        stripped = line.rstrip(" \t")
        if stripped != line:
            yield Hit(path, n, len(stripped) + 1, "trailing whitespace")
