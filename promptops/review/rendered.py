"""What a client would receive, as diffable lines, and unified diffs between two refs.

A rendered prompt is shown message by message with its role and content type kept
in a header line, so a diff says *which* message changed and a role swap is visible.
Binary content is summarised by size and hash: a changed image shows as changed
without pasting base64 into a review.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable

from promptops.errors import RenderError
from promptops.pipeline.source import Source
from promptops.render.mcp import error_code
from promptops.render.renderer import Renderer
from promptops.render.result import PromptResult
from promptops.render.transcript import review_lines

Lines = list[str]


def render_lines(renderer: Renderer, prompt: str, arguments: dict[str, object],
                 keep: Callable[[PromptResult], None] | None = None) -> Lines:
    """The GetPromptResult of one request as lines; a failure is rendered as its error.
    ``keep`` is given the result of a request that rendered."""
    try:
        result = renderer.get(prompt, arguments)
    except RenderError as exc:
        return [f"error {error_code(exc)}: {exc}"]
    if keep is not None:
        keep(result)
    return review_lines(result)


def unified(old: Lines, new: Lines, old_label: str, new_label: str) -> str:
    """A unified diff with 3 lines of context; '' when the lines are equal."""
    if old == new:
        return ""
    return "\n".join(
        difflib.unified_diff(old, new, fromfile=old_label, tofile=new_label, lineterm="")
    )


def source_lines(source: Source | None, path: str | None) -> Lines:
    if source is None or path is None:
        return []
    try:
        return source.read(path).decode("utf-8", "replace").splitlines()
    except FileNotFoundError:
        return []
