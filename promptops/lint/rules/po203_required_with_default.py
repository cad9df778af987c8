"""A required argument has a default, which can never be used.

Why: a required argument must always be sent, so the default is dead and misleads
readers into thinking the argument may be left out. Drop one of the two.

Measured on the real-prompt corpus: no finding in 78 prompts.

Fails::

    - name: tone
      required: true
      default: neutral

Passes::

    - name: tone
      default: neutral
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from promptops.lint.problem import Hit
from promptops.lint.rules._common import prompts

if TYPE_CHECKING:
    from promptops.lint.context import LintContext


CODE, NAME, LEVEL, NEEDS = "PO203", "required-with-default", "error", "package"


def check(ctx: LintContext) -> Iterator[Hit]:
    for prompt in prompts(ctx):
        for i, arg in enumerate(prompt.spec.arguments):
            if arg.required and arg.default is not None:
                line, col = ctx.position(prompt.file, ("arguments", i, "default"), key=True)
                yield Hit(prompt.path, line, col,
                          f"argument {arg.name!r} is required, so its default is never used")
