"""One compiled template and the general way it renders inside a request's budget.

What a template's render needs is prepared once per template: the template's parts kept in
slots (a ``Template`` is a dict of attributes, and of 1,000 prompts' templates few stay in
the CPU cache) and its globals flattened once. ``Template.generate`` flattens them (a
``ChainMap`` over the environment's) twice on every render: a sixth of a ``prompts/get``.
The context is the one Jinja's own ``new_context`` makes; :mod:`promptops.render.fastpath`
holds the peer that fills it in directly, chosen once per template.

Everything else is :func:`promptops.sandbox.environment.render_bounded`'s: each chunk
counted before it is kept (counting in batches was tried and dropped: a batch of fresh
large chunks may hold many times the output bound before it is counted), the deadline, the
error translation and the traceback rewriting of ``generate``.
"""

from __future__ import annotations

import re
import time
from collections import ChainMap
from collections.abc import Callable
from typing import TYPE_CHECKING

from promptops.errors import TemplateError
from promptops.sandbox import watchdog
from promptops.sandbox.limits import Budget, BudgetExceeded

if TYPE_CHECKING:
    from jinja2 import Template
    from jinja2.runtime import Context

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_monotonic = time.monotonic  # read before every template: one global, not two lookups


class Compiled:
    """A compiled template and what rendering it needs; the context is Jinja's own.

    ``shared``: the renderer's one flat copy of its environment's globals, for the
    templates that add none of their own (all of ours): one dict, not one each.
    """

    __slots__ = ("autoescape", "blocks", "environment", "globals", "name",
                 "new_context", "root", "template", "within")

    def __init__(self, template: Template, shared: dict[str, object] | None = None) -> None:
        from jinja2.runtime import new_context

        self.template = template
        self.new_context = new_context  # imported once here, not on every render
        self.environment = env = template.environment
        self.root, self.name, self.blocks = template.root_render_func, template.name, \
            template.blocks
        own = template.globals.maps[0] if isinstance(template.globals, ChainMap) else None
        self.globals: dict[str, object] = (shared if shared is not None and own == {}
                                           else dict(template.globals))
        self.autoescape = env.autoescape
        # whether a render's output is sure to be within what is left, by the bound the
        # code generator proved (sandbox/outputbound.py); None: no bound proved
        self.within: Callable[[dict[str, object], float], bool] | None = getattr(
            self.root, "__globals__", {}).get("_po_fits")

    def context(self, parent: dict[str, object]) -> Context:
        """The render context over ``parent`` (the flat globals and the arguments)."""
        return self.new_context(self.environment, self.name, self.blocks, parent, True,
                                self.globals)

    def render(self, ctx: dict[str, object], budget: Budget,
               parent: dict[str, object] | None = None) -> str:
        """The template's text for ``ctx``; ``parent``: the context's variables (the flat
        globals and ``ctx``), when the caller made them already."""
        if _monotonic() > budget.deadline:  # the next template of a slow request starts late
            budget.overrun()
        if parent is None:
            parent = {**self.globals, **ctx}
        context = self.context(parent)
        left = budget.output_left
        within = self.within
        parts: list[str] = []
        try:
            try:
                if within is not None and within(parent, left):  # no chunk needs counting
                    text = "".join(self.root(context))
                    budget.output_left = left - len(text)
                    return text
                for chunk in self.root(context):
                    left -= len(chunk)  # each chunk before it is kept: the bound is exact
                    if left < 0:
                        break
                    # `parts.append` written out: Python 3.11 specializes exactly this form
                    # (CALL_NO_KW_LIST_APPEND), ~60 instructions a chunk fewer than a bound
                    # method kept in a local
                    parts.append(chunk)
            except Exception:  # as Template.generate does: the traceback names template lines
                self.environment.handle_exception()
        except watchdog.RenderTimeout:
            budget.settle()
            raise BudgetExceeded(budget.late()) from None
        except RecursionError:
            raise BudgetExceeded(
                "template recursion too deep (a recursive include or macro?)") from None
        if left < 0:
            raise BudgetExceeded(budget.too_long())
        budget.output_left = left
        return "".join(parts)


def describe(exc: BaseException) -> str:
    """``Type: message``, without memory addresses (an error must not vary between runs)."""
    return _ADDRESS.sub("", f"{type(exc).__name__}: {exc}")


def message_failed(prompt: str, index: int, exc: BaseException) -> TemplateError:
    """The error of message ``index`` whose template failed: the package's, not the caller's.

    One wording for every path that renders a message (the general loop, ``for:`` groups,
    :class:`~promptops.render.fastpath.TextPlan`)."""
    return TemplateError(f"prompt {prompt!r} message {index} failed to render: {describe(exc)}")
