"""An argument's default does not match its ``pattern``.

Why: the pattern says what a valid value looks like; a default that breaks it renders a
value every request would be refused for. The match is the renderer's own (RE2, linear
time, see ``promptops/sandbox/patterns.py``), so a pattern that would backtrack for days in
Python's ``re`` cannot hang lint.

Measured on the real-prompt corpus: no finding in 78 prompts.

Fails::

    - name: ticket
      default: none
      pattern: "[A-Z]+-[0-9]+"

Passes::

    - name: ticket
      default: ABC-1
      pattern: "[A-Z]+-[0-9]+"
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from promptops.lint.problem import Hit
from promptops.lint.rules._common import package_limits, patterned
from promptops.sandbox.patterns import PatternError, compile_pattern

if TYPE_CHECKING:
    from promptops.lint.context import LintContext


CODE, NAME, LEVEL, NEEDS = "PO205", "default-not-matching-pattern", "error", "package"


def check(ctx: LintContext) -> Iterator[Hit]:
    timeout = package_limits(ctx).render_timeout_ms
    for prompt, i, arg in patterned(ctx):
        if arg.default is None:
            continue
        try:
            matched = compile_pattern(arg.pattern).fullmatch(arg.default, timeout)
        except PatternError:  # not RE2 (a load error says so) or a default too long
            continue
        if not matched:
            line, col = ctx.position(prompt.file, ("arguments", i, "default"))
            yield Hit(prompt.path, line, col, f"default {arg.default!r} of {arg.name!r} does "
                      f"not match its pattern {arg.pattern!r}")
