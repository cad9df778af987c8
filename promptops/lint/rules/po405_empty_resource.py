"""An embedded resource would carry no text and no blob.

Why: MCP requires an embedded resource to have ``text`` or ``blob`` content; an empty
one is either refused by clients or tells the model nothing.

Measured on the real-prompt corpus: no finding in 78 prompts.

Fails::

    resource:
      uri: promptops://notes
      text: ""

Passes::

    resource:
      uri: promptops://notes
      file: resources/notes.md
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from promptops.lint.problem import Hit
from promptops.lint.rules._common import prompts

if TYPE_CHECKING:
    from promptops.lint.context import LintContext


CODE, NAME, LEVEL, NEEDS = "PO405", "empty-resource", "error", "package"


def check(ctx: LintContext) -> Iterator[Hit]:
    for prompt in prompts(ctx):
        for i, msg in enumerate(prompt.spec.messages):
            res = msg.resource
            if res is None:
                continue
            if res.text is not None and not res.text.strip():
                line, col = ctx.position(prompt.file, ("messages", i, "resource", "text"))
                yield Hit(prompt.path, line, col, "resource text is empty")
            elif res.file is not None and ctx.pkg.resources.get(res.file) == b"":
                line, col = ctx.position(prompt.file, ("messages", i, "resource", "file"))
                yield Hit(prompt.path, line, col, f"resource file {res.file!r} is empty")
