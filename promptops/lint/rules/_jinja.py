"""Helpers for the rules that read template ASTs: every template once, and positions.

The sandbox refuses hostile templates at render time; these rules report the same
templates at review time. They walk every template a prompt renders, included partials
too, and report at the template's own file and line.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from promptops.lint.rules._common import prompt_sources, prompts

if TYPE_CHECKING:
    from promptops.lint.context import LintContext


def template_sources(ctx: LintContext) -> Iterator[tuple[str, Any, str]]:
    """(path, loc or None, source) of every distinct template the prompts render: for the
    rules whose answers are kept by text (``ctx.memo``), which then need no AST of a text
    answered already (a forked lint child's, :mod:`promptops.lint.halves`)."""
    seen: set[tuple[str, Any]] = set()
    for prompt in prompts(ctx):
        for path, loc, source in prompt_sources(ctx, prompt):
            if (path, loc) not in seen:
                seen.add((path, loc))
                yield path, loc, source


def position(ctx: LintContext, path: str, loc: Any, lineno: int, needle: str,
             skip: int = 0) -> tuple[int, int]:
    """Line and column of ``needle`` on template line ``lineno``, moved ``skip`` columns
    right when the needle was found there (``.__class__`` -> the name after the dot)."""
    line, col = ctx.locate(path, loc, lineno, needle)
    text = ctx.text(path) or ""
    lines = text.splitlines()
    if skip and 0 < line <= len(lines) and lines[line - 1][col - 1:].startswith(needle):
        col += skip
    return line, col
