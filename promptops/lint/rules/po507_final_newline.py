"""A file does not end with a newline.

Why: tools (``cat``, diffs, editors) show "No newline at end of file", and the next
edit shows a change on a line nobody touched. ``--fix`` adds one. A template file (a message
body, a partial) is not reported: the renderer keeps a template's final newline, so whether
it has one decides what the model receives (a partial included mid-sentence would gain a line
break); that is the author's text, not hygiene. The fix is proven on the spot like every fix:
a resource a prompt embeds would change, so there it is refused.

Measured on the real-prompt corpus: no finding in 78 prompts.

Fails::

    title: Greeting⏎ missing (promptops.yaml, a prompt file, a resource)

Passes::

    Answer in Markdown.⏎
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from promptops.lint.problem import Hit

if TYPE_CHECKING:
    from promptops.lint.context import LintContext


CODE, NAME, LEVEL, NEEDS = "PO507", "final-newline", "warning", "raw"


def check(ctx: LintContext) -> Iterator[Hit]:
    templates = ctx.package.templates if ctx.package is not None else {}
    for path in ctx.text_files:
        text = ctx.text(path)
        if path in templates:
            continue  # its last byte is prompt text: the author's choice, not hygiene
        if text and not text.endswith("\n"):
            last = text.split("\n")
            yield Hit(path, len(last), len(last[-1]) + 1, "no newline at the end of the file")


def fix(text: str) -> str:
    return text + "\n" if text and not text.endswith("\n") else text
