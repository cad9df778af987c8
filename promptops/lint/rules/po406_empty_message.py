"""A text message whose template renders nothing, so the message list has a hole.

Why: an empty message is refused by some clients and wastes a turn for others; often a
block scalar whose content was deleted, or a template that is only a comment.

Measured on the real-prompt corpus: no finding in 78 prompts.

Fails::

    - role: user
      text: "{# TODO #}"

Passes::

    - role: user
      text: "Summarise {{ topic }}."
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from promptops.lint.problem import Hit
from promptops.lint.rules._common import prompts

if TYPE_CHECKING:
    from promptops.lint.context import LintContext


CODE, NAME, LEVEL, NEEDS = "PO406", "empty-message", "error", "package"


def check(ctx: LintContext) -> Iterator[Hit]:
    for prompt in prompts(ctx):
        for unit in ctx.units(prompt):
            facts = ctx.facts(unit.path, unit.source)
            if facts is not None and facts.silent and unit.loc is not None \
                    and unit.loc[-1] == "text" and len(unit.loc) == 3:
                line, col = ctx.position(prompt.file, unit.loc)
                yield Hit(prompt.path, line, col,
                          f"message {unit.message} renders no text")
