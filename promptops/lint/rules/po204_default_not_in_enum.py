"""An argument's default is not one of its ``enum`` values.

Why: a request that leaves the argument out renders a value that a request could never
send, and clients that complete from the enum never offer it.

Measured on the real-prompt corpus: no finding in 78 prompts.

Fails::

    - name: tone
      default: casual
      enum: [neutral, formal]

Passes::

    - name: tone
      default: neutral
      enum: [neutral, formal]
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from promptops.lint.problem import Hit
from promptops.lint.rules._common import prompts

if TYPE_CHECKING:
    from promptops.lint.context import LintContext


CODE, NAME, LEVEL, NEEDS = "PO204", "default-not-in-enum", "error", "package"


def check(ctx: LintContext) -> Iterator[Hit]:
    for prompt in prompts(ctx):
        for i, arg in enumerate(prompt.spec.arguments):
            if arg.enum is not None and arg.default is not None and arg.default not in arg.enum:
                line, col = ctx.position(prompt.file, ("arguments", i, "default"))
                yield Hit(prompt.path, line, col,
                          f"default {arg.default!r} of {arg.name!r} is not one of its enum "
                          f"values ({', '.join(arg.enum)})")
