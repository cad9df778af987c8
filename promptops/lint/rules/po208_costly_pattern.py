"""An argument ``pattern`` that is costly to match: nested quantifiers, or too big a program.

Why: promptops matches patterns with RE2, in time linear in the value, so
``([A-Z]+-?)+[0-9]+`` cannot hang the server. Other engines backtrack: a client that
checks the same pattern in JavaScript, Python's ``re`` or most JSON Schema validators can
take exponential time on a short value, because an unbounded quantifier nested inside
another (``(x+)+``, ``(\\w+\\s?)*``) gives exponentially many ways to split it. Rewrite
the pattern so that each character can be matched one way (``[A-Z](-?[A-Z])*-?[0-9]+``
matches what ``([A-Z]+-?)+[0-9]+`` does). The check is the usual star-height test: it
also reports unambiguous nestings such as ``(-[a-z]+)*``, which are safe to keep.

Linear is not free either: RE2's cost per character grows with the size of the compiled
pattern, and a value longer than the request's time budget allows for that size is
refused (see ``SECURITY.md``). When ``maxLength`` admits longer values than that, they
would be rejected with -32602 although the pattern matches them: lower ``maxLength`` or
simplify the pattern.

Measured on the real-prompt corpus: no finding in 78 prompts.

Fails::

    - name: ticket
      pattern: "([A-Z]+-?)+[0-9]+"

Passes::

    - name: ticket
      pattern: "[A-Z](-?[A-Z])*-?[0-9]+"
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from promptops.lint.problem import Hit
from promptops.lint.rules._common import package_limits, patterned
from promptops.sandbox.patterns import PatternError, compile_pattern, nested_quantifier

if TYPE_CHECKING:
    from promptops.lint.context import LintContext


CODE, NAME, LEVEL, NEEDS = "PO208", "costly-pattern", "warning", "package"


def check(ctx: LintContext) -> Iterator[Hit]:
    timeout = package_limits(ctx).render_timeout_ms
    for prompt, i, arg in patterned(ctx):
        line, col = ctx.position(prompt.file, ("arguments", i, "pattern"))
        nested = nested_quantifier(arg.pattern)
        if nested is not None:
            yield Hit(prompt.path, line, col, f"pattern of {arg.name!r} nests an unbounded "
                      f"quantifier inside another ({nested[1]!r}): backtracking engines (JSON "
                      "Schema validators in clients, JavaScript, Python) can take exponential "
                      "time on it")
        try:
            longest = compile_pattern(arg.pattern).longest(timeout)
        except PatternError:  # not RE2: the package does not load, PO102 says why
            continue
        if longest < arg.maxLength:
            yield Hit(prompt.path, line, col, f"pattern of {arg.name!r} is too big to match "
                      f"values of up to maxLength {arg.maxLength} characters within the "
                      f"{timeout} ms request budget: values over {longest} characters will "
                      "be refused; lower maxLength or simplify the pattern")
