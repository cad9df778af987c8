"""Includes nest deeper than ``lint.maxIncludeDepth`` (default 4).

Why: a prompt whose text is spread over five levels of partials cannot be reviewed in a
pull request; flatten the chain. Configure the limit in ``promptops.yaml``::

    lint:
      maxIncludeDepth: 6

Measured on the real-prompt corpus: no finding in 78 prompts.

Fails (limit 1)::

    text: '{% include "partials/a.j2" %}'   # a.j2 includes b.j2

Passes (limit 1)::

    text: '{% include "partials/b.j2" %}'   # b.j2 includes nothing
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from promptops.lint.problem import Hit
from promptops.lint.rules._common import prompts

if TYPE_CHECKING:
    from promptops.lint.context import LintContext


CODE, NAME, LEVEL, NEEDS = "PO303", "include-depth", "warning", "package"
# Depth is measured along include paths, and a template is judged by the first path to it.
SCOPE = "package"


def _depth(ctx: LintContext, name: str, seen: tuple[str, ...], memo: dict[str, int]) -> int:
    if name in memo:
        return memo[name]
    templates = ctx.pkg.templates
    if name not in templates or name in seen:
        return 0
    kids = [n for n, _ in ctx.includes(name, templates[name])]
    depth = 1 + max((_depth(ctx, k, (*seen, name), memo) for k in kids), default=0)
    memo[name] = depth
    return depth


def check(ctx: LintContext) -> Iterator[Hit]:
    limit = ctx.settings.max_include_depth
    memo: dict[str, int] = {}
    for prompt in prompts(ctx):
        for unit in ctx.units(prompt):
            if unit.loc is None:  # a `template:` file counts as the first level
                depth = _depth(ctx, unit.path, (), memo)
                if depth > limit:
                    line, col = prompt.file.position(("messages", unit.message, "template"))
                    yield Hit(prompt.path, line, col,
                              f"includes nest {depth} deep, over the limit {limit}")
                continue
            for name, lineno in ctx.includes(unit.path, unit.source):
                depth = _depth(ctx, name, (), memo)
                if depth > limit:
                    line, col = ctx.locate(unit.path, unit.loc, lineno, "include")
                    yield Hit(prompt.path, line, col,
                              f"includes nest {depth} deep through {name!r}, over the limit "
                              f"{limit}")
