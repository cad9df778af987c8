"""A ``user`` message opens with system-style instructions ("You are ...").

Why: MCP prompts have no system role (the format's policy: the client owns the system
prompt), so a persona can only go in a message. A leading ``assistant`` message reads it in
the model's own voice; in a user message it reads as the user's request. The advice is
contested: real MCP servers put personas in user messages on purpose, and neither choice
reaches a system prompt. So it is ``info``: shown when selected (``--select PO402``), never
by default, and it never fails a gate.

Measured on the real-prompt corpus: no finding in 78 prompts.

Fails::

    - role: user
      text: You are a senior reviewer. Review {{ code }}.

Passes::

    - role: assistant
      text: I am a senior reviewer.
    - role: user
      text: Review {{ code }}.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from promptops.lint.problem import Hit
from promptops.lint.rules._common import prompts

if TYPE_CHECKING:
    from promptops.lint.context import LintContext


CODE, NAME, LEVEL, NEEDS = "PO402", "system-in-user-message", "info", "package"

_SYSTEM = re.compile(
    r"^\s*(?:system\s*:|you are (?:an? |the )|act as (?:an? |the )|your role is|"
    r"as an ai\b|from now on,? you)",
    re.I,
)


def check(ctx: LintContext) -> Iterator[Hit]:
    for prompt in prompts(ctx):
        for i, msg in enumerate(prompt.spec.messages):
            if msg.role == "user" and msg.text is not None and _SYSTEM.match(msg.text):
                line, col, _ = ctx.block_start(prompt.file, ("messages", i, "text"))
                yield Hit(prompt.path, line, col,
                          "user message starts with system-style instructions; put the "
                          "persona in a leading assistant message")
