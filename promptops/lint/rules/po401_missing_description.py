"""A prompt or an argument has no ``description``.

Why: MCP clients show descriptions when a user picks a prompt and fills in its
arguments; without one the user guesses what to type.

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
from typing import Any

from promptops.lint.problem import Hit
from promptops.lint.rules._common import argument_loc, prompts

CODE, NAME, LEVEL, NEEDS = "PO401", "missing-description", "warning", "package"


def check(ctx: Any) -> Iterator[Hit]:
    for prompt in prompts(ctx):
        if not (prompt.spec.description or "").strip():
            yield Hit(prompt.path, 1, 1, f"prompt {prompt.name!r} has no description")
        for arg in prompt.spec.arguments:
            if not (arg.description or "").strip():
                line, col = argument_loc(prompt, arg.name)
                yield Hit(prompt.path, line, col, f"argument {arg.name!r} has no description")
