"""The Jinja2 environment every template is parsed and rendered with.

Templates arrive through pull requests from people we do not fully trust, so the
environment is sandboxed and also bounded: calls check a wall-clock deadline,
``*`` and ``**`` refuse results over a size cap, and the output of one render is capped.
Nothing nondeterministic is reachable (``random`` and ``lipsum`` are removed), so a
render is a function of (package, prompt, arguments) alone.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import Any

from jinja2 import DictLoader, StrictUndefined
from jinja2.exceptions import SecurityError
from jinja2.sandbox import SandboxedEnvironment

RENDER_TIMEOUT_S = 2.0
MAX_OUTPUT_CHARS = 4_000_000
MAX_OPERAND_RESULT = 1_000_000  # elements or characters a single `*` may produce
MAX_POWER_EXPONENT = 1_000


class _Budget(threading.local):
    deadline: float = float("inf")


_budget = _Budget()


class BudgetExceeded(SecurityError):
    """A template exceeded the render time or size budget."""


class PromptEnvironment(SandboxedEnvironment):
    intercepted_binops = frozenset({"*", "**"})

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        if time.monotonic() > _budget.deadline:
            raise BudgetExceeded(f"render took longer than {RENDER_TIMEOUT_S:g} s")
        return super().call(__context, __obj, *args, **kwargs)

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if operator == "**":
            if isinstance(right, int | float) and abs(right) > MAX_POWER_EXPONENT:
                raise BudgetExceeded(f"exponent {right} is over the limit {MAX_POWER_EXPONENT}")
            return left**right
        for seq, count in ((left, right), (right, left)):
            sized = isinstance(seq, str | list | tuple) and isinstance(count, int)
            if sized and len(seq) * count > MAX_OPERAND_RESULT:
                raise BudgetExceeded(
                    f"`*` would build {len(seq) * count} items, over the limit "
                    f"{MAX_OPERAND_RESULT}"
                )
        return left * right


def environment(templates: Mapping[str, str]) -> PromptEnvironment:
    """An environment whose includes resolve only among ``templates`` (package files)."""
    env = PromptEnvironment(
        loader=DictLoader(dict(templates)),
        undefined=StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=False,
        cache_size=-1,
    )
    env.globals.pop("lipsum", None)
    env.filters.pop("random", None)
    return env


def render_bounded(template: Any, context: Mapping[str, Any]) -> str:
    """Render under the time and output budget, raising BudgetExceeded past either."""
    _budget.deadline = time.monotonic() + RENDER_TIMEOUT_S
    try:
        out: list[str] = []
        size = 0
        for chunk in template.generate(context):
            size += len(chunk)
            if size > MAX_OUTPUT_CHARS:
                raise BudgetExceeded(f"output is over {MAX_OUTPUT_CHARS} characters")
            if time.monotonic() > _budget.deadline:
                raise BudgetExceeded(f"render took longer than {RENDER_TIMEOUT_S:g} s")
            out.append(chunk)
        return "".join(out)
    finally:
        _budget.deadline = float("inf")
