"""A template uses a Jinja tag, filter or test that does not exist.

Why: an unknown tag fails to parse and an unknown filter or test fails only when the
template is compiled, i.e. on the first request; both are usually typos
(``{{ name | uper }}``) or extensions promptops does not load.

Measured on the real-prompt corpus: no finding in 78 prompts.

Fails::

    text: "Hello {{ name | uper }}"

Passes::

    text: "Hello {{ name | upper }}"
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from promptops.errors import did_you_mean
from promptops.lint.problem import Hit
from promptops.lint.rules._common import from_load, prompt_sources, prompts

if TYPE_CHECKING:
    from promptops.lint.context import LintContext


CODE, NAME, LEVEL, NEEDS = "PO104", "unknown-jinja-name", "error", "load"


def _unknown(ctx: LintContext, source: str) -> list[tuple[str, str, int]]:
    """The filters and tests ``source`` calls that the environment lacks: a function of the
    text alone (the environment is the same for every text), kept once per distinct text,
    so a prompt whose templates call only known ones costs a lookup."""
    facts = ctx.facts("", source)
    return [c for c in facts.calls if c[1] not in (
        ctx.env.filters if c[0] == "filter" else ctx.env.tests)] if facts else []


def check(ctx: LintContext) -> Iterator[Hit]:
    yield from from_load(ctx, CODE)
    if ctx.package is None:
        return
    seen: set[tuple[str, str, int]] = set()
    for prompt in prompts(ctx):
        for path, loc, source in prompt_sources(ctx, prompt):
            for kind, name, lineno in ctx.memo(CODE, source, lambda s: _unknown(ctx, s)):
                table = ctx.env.filters if kind == "filter" else ctx.env.tests
                if (path, name, lineno) in seen:
                    continue
                seen.add((path, name, lineno))
                line, col = ctx.locate(path, loc, lineno, name)
                yield Hit(path, line, col,
                          f"unknown Jinja {kind} {name!r}{did_you_mean(name, sorted(table))}")
