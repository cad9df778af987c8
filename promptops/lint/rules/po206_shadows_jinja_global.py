"""An argument is named like a Jinja global or special variable (``range``, ``loop``...).

Why: the argument hides the global in every template of the prompt, so
``{% for i in range(3) %}`` suddenly iterates over the characters of a string, or
``loop.index`` stops working.

Measured on the real-prompt corpus: no finding in 78 prompts.

Fails::

    - name: range

Passes::

    - name: page_range
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from promptops.lint.problem import Hit
from promptops.lint.rules._common import argument_loc, prompts

if TYPE_CHECKING:
    from promptops.lint.context import LintContext


CODE, NAME, LEVEL, NEEDS = "PO206", "shadows-jinja-global", "error", "package"

SPECIAL = frozenset({"loop", "self", "caller", "varargs", "kwargs", "super", "namespace",
                     "true", "false", "none", "True", "False", "None"})


def check(ctx: LintContext) -> Iterator[Hit]:
    reserved = set(ctx.env.globals) | SPECIAL
    for prompt in prompts(ctx):
        for arg in prompt.spec.arguments:
            if arg.name in reserved:
                line, col = argument_loc(prompt, arg.name)
                yield Hit(prompt.path, line, col,
                          f"argument {arg.name!r} shadows the Jinja global {arg.name!r}")
