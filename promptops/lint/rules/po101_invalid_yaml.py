"""A file is not valid YAML (or not UTF-8), so nothing in it can be served.

Why: an unparsable file stops the whole package from loading; the finding points at
the character the parser choked on, with a hint for the usual causes (tabs, a value
starting with ``{{``, an unclosed quote, a duplicate key).

Measured on the real-prompt corpus: no finding in 78 prompts.

Fails::

    messages:
      - role: user
        text: {{ topic }}

Passes::

    messages:
      - role: user
        text: "{{ topic }}"
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from promptops.lint.problem import Hit
from promptops.lint.rules._common import from_load

if TYPE_CHECKING:
    from promptops.lint.context import LintContext


CODE, NAME, LEVEL, NEEDS = "PO101", "invalid-yaml", "error", "load"


def check(ctx: LintContext) -> Iterator[Hit]:
    return from_load(ctx, CODE)
