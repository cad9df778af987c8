"""Keys of a prompt, argument or message are not in the conventional order.

Why: reviewers read a prompt top-down: identity (name, title, description), then its
arguments, then messages; an argument reads name, title, description, required,
default, enum, pattern, maxLength, examples. A consistent order makes diffs small
and reviews fast. ``--fix`` reorders the keys, keeping comments.

Fails::

    messages:
      - role: user
        text: Hi
    title: Greeting

Passes::

    title: Greeting
    messages:
      - role: user
        text: Hi
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from promptops.lint.problem import Hit
from promptops.lint.rules._common import prompts

CODE, NAME, LEVEL, NEEDS, FIXABLE = "PO108", "key-order", "warning", "package", True

PROMPT_ORDER = ("name", "title", "description", "icons", "whitespace", "arguments", "model",
                "tools", "output", "samples", "metadata", "messages")
ARGUMENT_ORDER = ("name", "title", "description", "type", "schema", "required", "default",
                  "enum", "pattern", "maxLength", "examples")
MESSAGE_ORDER = ("role", "text", "template", "resource", "image", "audio", "resource_link",
                 "history", "strip", "omitIfBlank", "annotations")


def out_of_order(keys: list[Any], order: tuple[str, ...]) -> Any:
    """The first key that comes after one it should precede; None when in order."""
    rank = {k: i for i, k in enumerate(order)}
    best = -1
    for key in keys:
        r = rank.get(key, len(order))
        if r < best:
            return key
        best = max(best, r)
    return None


def places(data: Any) -> Iterator[tuple[tuple[Any, ...], dict[str, Any], tuple[str, ...]]]:
    if not isinstance(data, dict):
        return
    yield (), data, PROMPT_ORDER
    for field, order in (("arguments", ARGUMENT_ORDER), ("messages", MESSAGE_ORDER)):
        items = data.get(field)
        if isinstance(items, list):
            for i, item in enumerate(items):
                if isinstance(item, dict):
                    yield (field, i), item, order


def check(ctx: Any) -> Iterator[Hit]:
    for prompt in prompts(ctx):
        for loc, mapping, order in places(prompt.file.data):
            key = out_of_order(list(mapping), order)
            if key is not None:
                line, col = prompt.file.position((*loc, key), key=True)
                yield Hit(prompt.path, line, col,
                          f"key {key!r} is out of order (expected: {', '.join(order)})")
