"""When two prompt names are the same name to a person: a rule of the package format.

MCP clients list prompts by name, so ``code-review`` and ``Code_Review`` look alike in a
menu and one of them is never picked on purpose. Validation refuses two prompts with the
very same name; lint's PO106 (duplicate-prompt-name) reports names that are equal once
folded; and incremental lint asks the same question to know when an added or removed
prompt could change those findings. One home, so that a change to the folding changes all
three together (it lived in PO106's module, and incremental lint imported a rule for it).
"""

from __future__ import annotations


def fold(name: str) -> str:
    """The key two prompt names clash on: equal up to case and ``-``/``_``."""
    return name.lower().replace("-", "_")
