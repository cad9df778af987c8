"""An include reaches outside the package (``../``, an absolute path, a symlink).

Why: a bundle holds only package files and the sandbox cannot read anything else, so
the include can never work; and a prompt must not depend on files nobody reviews.

Measured on the real-prompt corpus: no finding in 78 prompts.

Fails::

    text: '{% include "../outside/persona.j2" %}'

Passes::

    text: '{% include "partials/persona.j2" %}'
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from promptops.lint.problem import Hit
from promptops.lint.rules._common import from_load

if TYPE_CHECKING:
    from promptops.lint.context import LintContext


CODE, NAME, LEVEL, NEEDS = "PO304", "include-outside-package", "error", "load"


def check(ctx: LintContext) -> Iterator[Hit]:
    return from_load(ctx, CODE)
