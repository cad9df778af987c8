"""An argument's default does not match its ``pattern``.

Why: the pattern says what a valid value looks like; a default that breaks it renders a
value every request would be refused for.

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

import re
from collections.abc import Iterator
from typing import Any

from promptops.lint.problem import Hit
from promptops.lint.rules._common import prompts

CODE, NAME, LEVEL, NEEDS = "PO205", "default-not-matching-pattern", "error", "package"


def check(ctx: Any) -> Iterator[Hit]:
    for prompt in prompts(ctx):
        for i, arg in enumerate(prompt.spec.arguments):
            if arg.pattern is None or arg.default is None:
                continue
            if re.fullmatch(arg.pattern, arg.default) is None:
                line, col = prompt.file.position(("arguments", i, "default"))
                yield Hit(prompt.path, line, col,
                          f"default {arg.default!r} of {arg.name!r} does not match its "
                          f"pattern {arg.pattern!r}")
