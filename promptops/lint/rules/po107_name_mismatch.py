"""The ``name:`` of a prompt disagrees with its file name.

Why: people find a prompt by its file; when ``prompts/summarize.prompt.yaml`` serves
``digest`` nobody can find what a client asks for. Drop ``name:`` (the file name is
the default) or rename the file.

Measured on the real-prompt corpus: no finding in 78 prompts.

Fails::

    # prompts/summarize.prompt.yaml
    name: digest

Passes::

    # prompts/summarize.prompt.yaml
    name: summarize
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from promptops.lint.problem import Hit
from promptops.lint.rules._common import prompts

if TYPE_CHECKING:
    from promptops.lint.context import LintContext


CODE, NAME, LEVEL, NEEDS = "PO107", "name-mismatch", "warning", "package"


def check(ctx: LintContext) -> Iterator[Hit]:
    for prompt in prompts(ctx):
        stem = prompt.path.rsplit("/", 1)[-1].removesuffix(".prompt.yaml")
        if prompt.spec.name is not None and prompt.spec.name != stem:
            line, col = ctx.position(prompt.file, ("name",))
            yield Hit(prompt.path, line, col,
                      f"name {prompt.spec.name!r} differs from the file name {stem!r}")
