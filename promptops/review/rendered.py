"""What a client would receive, as diffable lines, and unified diffs between two refs.

A rendered prompt is shown message by message with its role and content type kept
in a header line, so a diff says *which* message changed and a role swap is visible.
Binary content is summarised by size and hash: a changed image shows as changed
without pasting base64 into a review.
"""

from __future__ import annotations

from collections.abc import Callable

from promptops.errors import RenderError
from promptops.pipeline.source import Source
from promptops.render.mcp import error_code
from promptops.render.renderer import Renderer
from promptops.render.result import PromptResult
from promptops.render.transcript import review_lines
from promptops.review import linediff

Lines = list[str]


def render_lines(renderer: Renderer, prompt: str, arguments: dict[str, object],
                 keep: Callable[[PromptResult], None] | None = None) -> Lines:
    """The GetPromptResult of one request as lines; a failure is rendered as its error.
    ``keep`` is given the result of a request that rendered."""
    try:
        result = renderer.get(prompt, arguments)
    except RenderError as exc:
        return error_lines(exc)
    if keep is not None:
        keep(result)
    return review_lines(result)


def error_lines(exc: RenderError) -> Lines:
    """A failed request as its lines: diffed like a rendered one, so a side that starts or
    stops failing shows as a change (:func:`render_lines`, and the UI's compare view, which
    renders each side once and makes its page and its lines from that one answer)."""
    return [f"error {error_code(exc)}: {exc}"]


def hunks(old: Lines, new: Lines) -> Lines:
    """The hunks of the unified diff of ``old`` and ``new`` (3 lines of context), without
    the two label lines; [] when the lines are equal.

    Kept apart from the labels so a process that has both ends' lines (the review's
    render workers) sends back only the hunks, usually a few lines, where both ends are
    hundreds, and the diff's CPU runs on the workers instead of the reviewing process;
    the labels are the reviewer's, added by :func:`labelled`. Made from the lines' common
    head and tail where they prove difflib's blocks (:mod:`promptops.review.linediff`:
    a pair with one place changed, the usual one, at a third of difflib's CPU).
    """
    if old == new:
        return []
    return list(linediff.hunks(old, new))


def labelled(body: Lines, old_label: str, new_label: str) -> str:
    """The unified diff whose hunks are ``body``, with its two label lines; '' when there
    are no hunks (the lines were equal)."""
    if not body:
        return ""
    return "\n".join([f"--- {old_label}", f"+++ {new_label}", *body])


def unified(old: Lines, new: Lines, old_label: str, new_label: str) -> str:
    """A unified diff with 3 lines of context; '' when the lines are equal."""
    return labelled(hunks(old, new), old_label, new_label)


def source_lines(source: Source | None, path: str | None) -> Lines:
    if source is None or path is None:
        return []
    try:
        return source.read(path).decode("utf-8", "replace").splitlines()
    except FileNotFoundError:
        return []
