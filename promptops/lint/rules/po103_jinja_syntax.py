"""A template has a Jinja syntax error.

Why: the prompt would fail on every request. The position is the file line inside a
``text: |`` block (template line n of a block is file line block start + n - 1).

Measured on the real-prompt corpus: no finding in 78 prompts.

Fails::

    text: |
      Summarise {{ topic }}.
      {% if tone %}Use a {{ tone }} tone.

Passes::

    text: |
      Summarise {{ topic }}.
      {% if tone %}Use a {{ tone }} tone.{% endif %}
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from promptops.lint.problem import Hit
from promptops.lint.rules._common import from_load

if TYPE_CHECKING:
    from promptops.lint.context import LintContext


CODE, NAME, LEVEL, NEEDS = "PO103", "jinja-syntax", "error", "load"


def check(ctx: LintContext) -> Iterator[Hit]:
    return from_load(ctx, CODE)
