"""A resource, image or audio file is missing or outside the package (also by symlink).

Why: the prompt cannot be served; a symlink that leaves the package would publish a
file nobody reviewed, so it is treated as missing.

Measured on the real-prompt corpus: no finding in 78 prompts.

Fails::

    image:
      file: resources/diagram.png   # no such file

Passes::

    image:
      file: resources/architecture.png
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from promptops.lint.problem import Hit
from promptops.lint.rules._common import from_load

if TYPE_CHECKING:
    from promptops.lint.context import LintContext


CODE, NAME, LEVEL, NEEDS = "PO306", "resource-missing", "error", "load"


def check(ctx: LintContext) -> Iterator[Hit]:
    return from_load(ctx, CODE)
