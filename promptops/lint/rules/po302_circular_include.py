"""Templates include each other in a cycle.

Why: rendering recurses until the render budget stops it, so the prompt always fails.

Measured on the real-prompt corpus: no finding in 78 prompts.

Fails::

    # partials/a.j2
    {% include "partials/b.j2" %}
    # partials/b.j2
    {% include "partials/a.j2" %}

Passes::

    # partials/a.j2
    {% include "partials/b.j2" %}
    # partials/b.j2
    Plain text.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from promptops.lint.problem import Hit

if TYPE_CHECKING:
    from promptops.lint.context import LintContext


CODE, NAME, LEVEL, NEEDS = "PO302", "circular-include", "error", "package"
# A cycle is found among every prompt's includes; while one exists, what other package-scope
# rules find (include depth) depends on the order prompts are visited.
SCOPE, CYCLE = "package", True


def check(ctx: LintContext) -> Iterator[Hit]:
    templates = ctx.pkg.templates
    reported: set[frozenset[str]] = set()
    for start in templates:
        stack: list[tuple[str, list[str]]] = [(start, [start])]
        while stack:
            node, path = stack.pop()
            for name, lineno in ctx.includes(node, templates[node]):
                if name == start:
                    cycle = frozenset(path)
                    if cycle not in reported:
                        reported.add(cycle)
                        line, col = ctx.locate(node, None, lineno, "include")
                        chain = " -> ".join([*path, start])
                        yield Hit(node, line, col, f"circular include: {chain}")
                elif name in templates and name not in path and len(path) < 50:
                    stack.append((name, [*path, name]))
