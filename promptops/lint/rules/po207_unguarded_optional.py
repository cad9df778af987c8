"""An optional argument without a default is printed without a guard.

Why: an absent optional argument renders as an empty string, leaving a gap such as
"Focus on  first." Guard it (``{% if focus %}``, ``{{ focus or 'x' }}``,
``{{ focus | default('x') }}``) or give it a ``default``.

Measured on the real-prompt corpus: no finding in 78 prompts.

Fails::

    - name: focus
    ...
    text: "Focus on {{ focus }} first."

Passes::

    text: "{% if focus %}Focus on {{ focus }} first.{% endif %}"
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from jinja2 import nodes

from promptops.lint.problem import Hit
from promptops.lint.rules._common import prompt_sources, prompts

if TYPE_CHECKING:
    from promptops.lint.context import LintContext


CODE, NAME, LEVEL, NEEDS = "PO207", "unguarded-optional", "warning", "package"


def _names(node: nodes.Node) -> set[str]:
    found = {n.name for n in node.find_all(nodes.Name)}
    return found | {node.name} if isinstance(node, nodes.Name) else found


def unguarded(node: nodes.Node, guarded: frozenset[str]) -> Iterator[nodes.Name]:
    """Names printed by an Output with no enclosing test that mentions them."""
    if isinstance(node, nodes.If):
        inner = guarded | _names(node.test)
        for child in node.body:
            yield from unguarded(child, inner)
        for child in (*node.elif_, *node.else_):
            yield from unguarded(child, guarded)
        return
    if isinstance(node, nodes.Output):
        for expr in node.nodes:
            yield from _printed(expr, guarded)
        return
    for child in node.iter_child_nodes():
        yield from unguarded(child, guarded)


def _printed(expr: nodes.Node, guarded: frozenset[str]) -> Iterator[nodes.Name]:
    if isinstance(expr, nodes.Name) and expr.name not in guarded:
        yield expr
    elif isinstance(expr, nodes.Filter) and expr.name not in ("default", "d") and expr.node:
        yield from _printed(expr.node, guarded)
    elif isinstance(expr, nodes.Concat):
        for part in expr.nodes:
            yield from _printed(part, guarded)


def _unguarded(ctx: LintContext, source: str) -> list[tuple[str, int]]:
    """(name, line) of each name ``source`` prints unguarded: a function of the text alone,
    kept once per distinct text (a forked lint child computes half of them,
    :mod:`promptops.lint.halves`) and computed once per template shape (names, tests and
    outputs are in its tags: :mod:`promptops.lint.shaped`); empty when it does not parse."""
    return ctx.shaped(CODE, source, lambda ast: [] if ast is None else [
        (n.name, n.lineno) for n in unguarded(ast, frozenset())], _no_literal)


def _no_literal(every: list[nodes.Node]) -> list[nodes.Node]:
    """The literals the rule reads: none (names, tests and outputs only)."""
    return []


def check(ctx: LintContext) -> Iterator[Hit]:
    for prompt in prompts(ctx):
        optional = {a.name for a in prompt.spec.arguments if not a.required and a.default is None}
        if not optional:
            continue
        for path, loc, source in prompt_sources(ctx, prompt):
            for name, lineno in ctx.memo(CODE, source, lambda s: _unguarded(ctx, s)):
                if name in optional:
                    line, col = ctx.locate(path, loc, lineno, name)
                    yield Hit(path, line, col,
                              f"optional argument {name!r} has no default and is printed "
                              "without a guard: an absent value leaves an empty gap")
