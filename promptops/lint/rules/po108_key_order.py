"""Keys of a prompt, argument or message are not in the conventional order.

Why: reviewers read a prompt top-down: identity (name, title, description), then its
arguments, then messages. The order is the one the format's model declares (docs/format.md
lists the keys in that order), so every documented key has its place:
name, title, description, resultDescription, icons, arguments, messages; an argument reads
name, title, description, required, default, enum, pattern, maxLength, examples. A
consistent order makes diffs small and reviews fast. ``--fix`` reorders the keys, keeping comments.

Measured on the real-prompt corpus: no finding in 78 prompts.

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
from functools import cache
from typing import TYPE_CHECKING, Any

from promptops.lint.problem import Hit
from promptops.lint.rules._common import prompts

if TYPE_CHECKING:
    from promptops.lint.context import LintContext


CODE, NAME, LEVEL, NEEDS = "PO108", "key-order", "warning", "package"

# The order is the format's own: the model declares every documented key once, in reading
# order, so a key added to the format (``resultDescription``) is placed without editing lint.
# A field's key in the file is its alias where it has one (``schema_`` is written ``schema``).
# Read when the rule runs, not when the rule table is imported: a cached lint run never
# builds the pydantic models (a tenth of a second).
@cache
def orders() -> dict[str, tuple[str, ...]]:
    """"prompt", "arguments", "messages" -> the keys in the order the model declares them."""
    from promptops.pipeline.model import Argument, Message, PromptFile

    return {where: tuple(f.alias or n for n, f in model.model_fields.items())
            for where, model in (("prompt", PromptFile), ("arguments", Argument),
                                 ("messages", Message))}


def out_of_order(keys: list[Any], order: tuple[str, ...]) -> Any:
    """The first key that comes after one it should precede; None when in order."""
    rank = _rank(order)
    best = -1
    for key in keys:
        r = rank.get(key, len(order))
        if r < best:
            return key
        best = max(best, r)
    return None


@cache
def _rank(order: tuple[str, ...]) -> dict[str, int]:
    """Each key's place in ``order`` (read-only: shared by every call)."""
    return {k: i for i, k in enumerate(order)}


def places(data: Any) -> Iterator[tuple[tuple[Any, ...], dict[str, Any], tuple[str, ...]]]:
    if not isinstance(data, dict):
        return
    yield (), data, orders()["prompt"]
    for field in ("arguments", "messages"):
        items, order = data.get(field), orders()[field]
        if isinstance(items, list):
            for i, item in enumerate(items):
                if isinstance(item, dict):
                    yield (field, i), item, order


def check(ctx: LintContext) -> Iterator[Hit]:
    for prompt in prompts(ctx):
        for loc, mapping, order in places(prompt.file.data):
            key = out_of_order(list(mapping), order)
            if key is not None:
                line, col = ctx.position(prompt.file, (*loc, key), key=True)
                yield Hit(prompt.path, line, col,
                          f"key {key!r} is out of order (expected: {', '.join(order)})")


def fix(text: str) -> str:
    """Prompt, argument and message keys in the format's order, comments kept (ruamel.yaml
    round-trip editing moves a comment with its key)."""
    import io

    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=4, offset=2)
    data = yaml.load(text)
    for _, mapping, order in places(data):
        if out_of_order(list(mapping), order) is None:
            continue
        rank = {k: i for i, k in enumerate(order)}
        for key in sorted(mapping, key=lambda k: rank.get(k, len(order))):
            mapping.move_to_end(key)  # type: ignore[attr-defined]  # a CommentedMap
    out = io.StringIO()
    yaml.dump(data, out)
    return out.getvalue()
