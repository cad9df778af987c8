"""A file does not end with a newline.

Why: the last line of a template file then renders without its line end, and tools
(``cat``, diffs) show "No newline at end of file". ``--fix`` adds one.

Fails::

    Answer in Markdown.⏎ missing

Passes::

    Answer in Markdown.⏎
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from promptops.lint.problem import Hit

CODE, NAME, LEVEL, NEEDS, FIXABLE = "PO507", "final-newline", "warning", "raw", True


def check(ctx: Any) -> Iterator[Hit]:
    for path in ctx.text_files:
        text = ctx.text(path)
        if text and not text.endswith("\n"):
            last = text.split("\n")
            yield Hit(path, len(last), len(last[-1]) + 1, "no newline at the end of the file")
