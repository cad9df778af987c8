"""An include, import or ``template:`` names a file that is not in the package.

Why: the prompt cannot render at all. Dynamic includes (a name computed at render
time) are reported here too: they cannot be checked, bundled or reviewed.

Measured on the real-prompt corpus: no finding in 78 prompts.

Fails::

    text: |
      {% include "partials/persona.j2" %}

Passes::

    text: |
      {% include "partials/reviewer_persona.j2" %}
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from promptops.lint.problem import Hit
from promptops.lint.rules._common import from_load

if TYPE_CHECKING:
    from promptops.lint.context import LintContext


CODE, NAME, LEVEL, NEEDS = "PO301", "missing-include", "error", "load"


def check(ctx: LintContext) -> Iterator[Hit]:
    return from_load(ctx, CODE)
