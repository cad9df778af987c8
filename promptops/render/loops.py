"""Messages repeated per item of an array argument: the format's ``for: ITEM in ARGUMENT``.

Real prompts build a conversation from a list (promptfoo's ``_conversation``: a user turn and
the model's answer per earlier exchange). A Jinja ``{% for %}`` cannot do that inside one
message, so the format repeats *messages*: consecutive messages with the same ``for`` form
one group, rendered once per item, in order, with ``ITEM`` bound to the item and ``loop``
to Jinja's loop facts (``index``, ``index0``, ``revindex``, ``revindex0``, ``first``,
``last``, ``length``). Everything else in the context (the arguments, ``args``) is as for
any message.

Bounded like a history splice: at most :data:`~promptops.render.renderer.MAX_HISTORY`
items, and every rendered template counts against the request's budget (time and output),
so a long list ends in the budget's error, not in an unbounded reply. It lives apart from
:mod:`promptops.render.renderer` so that prompts without loops never import or pay for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from promptops.errors import ArgumentError

if TYPE_CHECKING:
    from promptops.pipeline.bundle_types import Message
    from promptops.render.renderer import Renderer
    from promptops.render.result import PromptMessage


def render_loops(renderer: Renderer, name: str, items: list[Message],
                 context: dict[str, object], messages: list[PromptMessage],
                 sources: list[Message]) -> None:
    """Render ``items`` (a prompt's messages, some with ``for``) into ``messages``."""
    from promptops.render.renderer import MAX_HISTORY

    i = 0
    while i < len(items):
        msg = items[i]
        over = msg.get("loopOver")
        if over is None:
            if msg["type"] == "history":
                renderer._history(messages, msg, context[msg["argument"]])
                sources.extend([msg] * (len(messages) - len(sources)))
            else:
                renderer._one(name, i, msg, context, messages, sources)
            i += 1
            continue
        item = msg["loopItem"]
        end = i + 1
        while end < len(items) and items[end].get("loopOver") == over \
                and items[end].get("loopItem") == item:
            end += 1
        values = context[over]
        if values is None:  # an optional array argument not given: no iteration
            values = []
        if not isinstance(values, list):
            raise ArgumentError(f"argument {over!r} must be an array", argument=over)
        if len(values) > MAX_HISTORY:
            raise ArgumentError(f"argument {over!r} holds {len(values)} items, over "
                                f"{MAX_HISTORY}", argument=over)
        length = len(values)
        for n, value in enumerate(values):
            inner = dict(context)
            inner[item] = value
            inner["loop"] = {"index": n + 1, "index0": n, "revindex": length - n,
                             "revindex0": length - n - 1, "first": n == 0,
                             "last": n == length - 1, "length": length}
            for k in range(i, end):
                renderer._one(name, k, items[k], inner, messages, sources)
        i = end
