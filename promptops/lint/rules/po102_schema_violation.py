"""A file does not match the package format (unknown key, wrong type, missing key).

Why: the format is strict so that a typo is an error instead of a silently ignored
setting; the message names the key and suggests the closest valid one.

Measured on the real-prompt corpus: no finding in 78 prompts.

Fails::

    arguments:
      - name: topic
        requird: true

Passes::

    arguments:
      - name: topic
        required: true
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from promptops.lint.problem import Hit
from promptops.lint.rules._common import from_load

if TYPE_CHECKING:
    from promptops.lint.context import LintContext


CODE, NAME, LEVEL, NEEDS = "PO102", "schema-violation", "error", "load"


def check(ctx: LintContext) -> Iterator[Hit]:
    return from_load(ctx, CODE)
