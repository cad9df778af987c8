"""An ``enum`` has over 100 values, more than MCP completion can return.

Why: ``completion/complete`` answers at most 100 values, so clients cannot offer the
rest; use ``examples`` plus a ``pattern`` instead, or split the argument.

Measured on the real-prompt corpus: no finding in 78 prompts.

Fails::

    enum: [v1, v2, ..., v101]

Passes::

    examples: [v1, v2]
    pattern: "v[0-9]+"
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from promptops.lint.problem import Hit
from promptops.lint.rules._common import prompts

if TYPE_CHECKING:
    from promptops.lint.context import LintContext


CODE, NAME, LEVEL, NEEDS = "PO403", "enum-too-large", "warning", "package"
LIMIT = 100


def check(ctx: LintContext) -> Iterator[Hit]:
    for prompt in prompts(ctx):
        for i, arg in enumerate(prompt.spec.arguments):
            if arg.enum is not None and len(arg.enum) > LIMIT:
                line, col = ctx.position(prompt.file, ("arguments", i, "enum"), key=True)
                yield Hit(prompt.path, line, col,
                          f"enum of {arg.name!r} has {len(arg.enum)} values; completion "
                          f"returns at most {LIMIT}")
