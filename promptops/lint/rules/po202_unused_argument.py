"""A declared argument is never used by any template of the prompt.

Why: clients ask users for it and the answer is thrown away; usually the template was
edited and the argument forgotten, or the template uses a misspelt name.

Measured on the real-prompt corpus: no finding in 78 prompts.

Fails::

    arguments:
      - name: tone
    messages:
      - role: user
        text: Write a poem.

Passes::

    arguments:
      - name: tone
    messages:
      - role: user
        text: "Write a {{ tone }} poem."
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from promptops.lint.problem import Hit
from promptops.lint.rules._common import argument_loc, prompt_sources, prompts

if TYPE_CHECKING:
    from promptops.lint.context import LintContext


CODE, NAME, LEVEL, NEEDS = "PO202", "unused-argument", "warning", "package"


def check(ctx: LintContext) -> Iterator[Hit]:
    for prompt in prompts(ctx):
        used: set[str] = {m.history for m in prompt.spec.messages if m.history}  # spliced in
        used.update(m.loop[1] for m in prompt.spec.messages if m.loop is not None)  # `for:`
        complete = True
        for path, _, source in prompt_sources(ctx, prompt):
            facts = ctx.facts(path, source)
            if facts is None:
                complete = False
                continue
            used.update(name for name, _ in facts.loads)
        if not complete:
            continue
        for arg in prompt.spec.arguments:
            if arg.name not in used:
                line, col = argument_loc(prompt, arg.name)
                yield Hit(prompt.path, line, col,
                          f"argument {arg.name!r} is declared but no template uses it")
