"""A ``user`` message opens with system-style instructions ("You are ...").

Why: MCP prompts have no system role; persona and ground rules belong in a leading
``assistant`` message (the preamble), where the model reads them as its own voice.
In a user message they read as the user's request and are easier to override. A
heuristic, so a warning.

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
from typing import Any

from promptops.lint.problem import Hit
from promptops.lint.rules._common import prompts

CODE, NAME, LEVEL, NEEDS = "PO402", "system-in-user-message", "warning", "package"

_SYSTEM = re.compile(
    r"^\s*(?:system\s*:|you are (?:an? |the )|act as (?:an? |the )|your role is|"
    r"as an ai\b|from now on,? you)",
    re.I,
)


def check(ctx: Any) -> Iterator[Hit]:
    for prompt in prompts(ctx):
        for i, msg in enumerate(prompt.spec.messages):
            if msg.role == "user" and msg.text is not None and _SYSTEM.match(msg.text):
                line, col, _ = prompt.file.block_start(("messages", i, "text"))
                yield Hit(prompt.path, line, col,
                          "user message starts with system-style instructions; put the "
                          "persona in a leading assistant message")
