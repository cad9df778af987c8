"""Two prompts share a name, also when they differ only in case or ``-``/``_``.

Why: MCP clients list prompts by name; ``code-review`` and ``Code_Review`` look the
same to a user picking from a menu and one of them is never chosen on purpose.

Measured on the real-prompt corpus: no finding in 78 prompts.

Fails::

    # prompts/code_review.prompt.yaml and prompts/code-review.prompt.yaml

Passes::

    # prompts/code_review.prompt.yaml and prompts/security_review.prompt.yaml
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from promptops.lint.problem import Hit
from promptops.lint.rules._common import from_load, prompts
from promptops.pipeline.names import fold

if TYPE_CHECKING:
    from promptops.lint.context import LintContext
    from promptops.pipeline.validate import PromptDef


CODE, NAME, LEVEL, NEEDS = "PO106", "duplicate-prompt-name", "error", "load"
# Which prompt is the duplicate depends on every prompt's name (pipeline.names.fold).
SCOPE = "package"


def check(ctx: LintContext) -> Iterator[Hit]:
    yield from from_load(ctx, CODE)
    first: dict[str, PromptDef] = {}
    for prompt in sorted(prompts(ctx), key=lambda p: p.path):
        key = fold(prompt.name)
        if key in first:
            other = first[key]
            line, col = ctx.position(prompt.file, ("name",)) if prompt.spec.name else (1, 1)
            yield Hit(prompt.path, line, col,
                      f"prompt name {prompt.name!r} differs from {other.name!r} "
                      f"({other.path}) only in case or '-'/'_'")
        else:
            first[key] = prompt
