"""A message the edit cannot reach rendered once for both ends of a review.

A review renders every affected prompt at BASE and at HEAD. When one shared partial is
edited, most prompts reach it from one message only (a system-like preamble), and their
other messages are the same text, reaching the same templates, with the same arguments at
both ends: their BASE render is HEAD's, character for character. So the review renders
HEAD first, keeps what each message rendered and what it drew from the request's budget,
and BASE takes those messages as rendered instead of rendering them again (and never
compiles their templates).

Which messages qualify is decided per prompt pair before the renders
(:meth:`promptops.review.shared.Shared.reusable`: the same message, every template it
reaches the same at both ends through static includes, the same prompt otherwise and the
same render settings), and per request by the pair's renderer (both ends rendered with
equal arguments, so both bind the same context). Only the plain text messages of
:class:`~promptops.render.fastpath.TextPlan` prompts are kept: each message renders once
per request there, in order.

The budget is what could still tell the two ends apart: a request's output and work
limits count every message. A message is taken as rendered only when BASE has at least
what HEAD had left when HEAD rendered it (output and work): HEAD's render of it never
crossed a limit, so BASE's, drawing the very same amounts from more, could not either; it
then takes the same amounts. Otherwise (an edit that made BASE's earlier messages longer)
the message renders at BASE as before. The deadline is checked as a render checks it
before each template. ``tests/review/test_review_reuse.py`` compares the reviews with
and without reuse.
"""

from __future__ import annotations

from time import monotonic as _monotonic
from typing import TYPE_CHECKING

from promptops.render.renderer import Renderer
from promptops.render.template import Compiled
from promptops.sandbox.limits import Budget, BudgetExceeded

if TYPE_CHECKING:
    from promptops.pipeline.bundle_types import Bundle
    from promptops.render.codecache import CodeCache

# what one message rendered, and the request's (output, work) left before and after it
Done = tuple[str, float, float, float, float]


class SideRenderer(Renderer):
    """One end's renderer in a review: at HEAD it can keep what each message of a request
    renders (:attr:`record`), at BASE take the messages it is given (:attr:`reuse`)."""

    def __init__(self, bundle: Bundle, code: CodeCache | None = None) -> None:
        super().__init__(bundle, code)
        self.record: dict[int, Done] | None = None  # filled while a HEAD request renders
        self.reuse: dict[int, Done] = {}  # what the BASE request being rendered may take
        self.taken = 0  # messages taken as rendered (the tests count them)
        self._stand_ins: dict[tuple[str, int, str], _Message] = {}

    def template(self, prompt: str, index: int, field: str, source: str) -> Compiled:
        """A :class:`TextPlan` message's template, recording or reused (the plan keeps it,
        so this runs once per message)."""
        key = (prompt, index, field)
        found = self._stand_ins.get(key)
        if found is None:
            found = self._stand_ins[key] = _Message(self, prompt, index, field, source)
        return found

    def compiled(self, prompt: str, index: int, field: str, source: str) -> Compiled:
        """The message's real compiled template (the renderer's own cache)."""
        return super().template(prompt, index, field, source)


class _Message(Compiled):
    """A message's template as a :class:`TextPlan` renders it, through its side.

    Not set up as a compiled template of its own (no ``super().__init__``): the plan reads
    only ``globals`` and calls :meth:`render`; the real template is compiled the first
    time the message does render.
    """

    __slots__ = ("field", "index", "prompt", "real", "side", "source")

    def __init__(self, side: SideRenderer, prompt: str, index: int, field: str,
                 source: str) -> None:
        self.side, self.prompt, self.index, self.field, self.source = \
            side, prompt, index, field, source
        self.real: Compiled | None = None
        self.globals: dict[str, object] = {}  # the real template's, once compiled

    def render(self, ctx: dict[str, object], budget: Budget,
               parent: dict[str, object] | None = None) -> str:
        side = self.side
        done = side.reuse.get(self.index) if side.reuse else None
        if done is not None and budget.output_left >= done[1] and budget.work_left >= done[2]:
            if budget.deadline < _monotonic():  # as a template's render checks it first
                raise BudgetExceeded(budget.late())
            budget.output_left -= done[1] - done[3]
            budget.work_left -= done[2] - done[4]
            side.taken += 1
            return done[0]
        real = self.real
        if real is None:
            real = self.real = side.compiled(self.prompt, self.index, self.field, self.source)
        if parent is not None and self.globals is not real.globals:
            parent = None  # made over this stand-in's globals: the real template's own
        self.globals = real.globals
        record = side.record
        if record is None:
            return real.render(ctx, budget, parent)
        left, work = budget.output_left, budget.work_left
        text = real.render(ctx, budget, parent)
        record[self.index] = (text, left, work, budget.output_left, budget.work_left)
        return text
