"""A prompt or an argument has no ``description``.

Why: MCP clients show descriptions when a user picks a prompt and fills in its
arguments; without one the user guesses what to type. One finding per prompt names every
argument that lacks one (on real prompts, a prompt without descriptions lacks them all).
When more than five prompts lack descriptions (an imported package), the text format
prints them as one summary naming the first files, so the findings that need other
actions are not drowned; ``--select PO401`` and the JSON, GitHub and SARIF formats list
each one.

Measured on the real-prompt corpus: 59/59 findings real (100%).

Fails::

    arguments:
      - name: topic

Passes::

    arguments:
      - name: topic
        description: What the summary is about
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from promptops.lint.problem import Hit
from promptops.lint.rules._common import argument_loc, prompts

if TYPE_CHECKING:
    from promptops.lint.context import LintContext


CODE, NAME, LEVEL, NEEDS = "PO401", "missing-description", "warning", "package"
GROUP = ("{n} prompts have no description, or arguments without one (an MCP client shows its "
         "user nothing to go by)")


def check(ctx: LintContext) -> Iterator[Hit]:
    for prompt in prompts(ctx):
        bare = [a.name for a in prompt.spec.arguments if not (a.description or "").strip()]
        args = ", ".join(repr(n) for n in bare[:5]) + (", ..." if len(bare) > 5 else "")
        noun = f"argument{'s' if len(bare) > 1 else ''}"
        if not (prompt.spec.description or "").strip():
            verb = "do" if len(bare) > 1 else "does"
            also = f", nor {verb} its {noun} {args}" if bare else ""
            yield Hit(prompt.path, 1, 1, f"prompt {prompt.name!r} has no description{also}")
        elif bare:
            line, col = argument_loc(prompt, bare[0])
            yield Hit(prompt.path, line, col,
                      f"{noun} {args} of prompt {prompt.name!r} "
                      f"{'have' if len(bare) > 1 else 'has'} no description")
