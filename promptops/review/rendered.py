"""What a client would receive, as diffable lines, and unified diffs between two refs.

A rendered prompt is shown message by message with its role and content type kept
in a header line, so a diff says *which* message changed and a role swap is visible.
Binary content is summarised by size and hash: a changed image shows as changed
without pasting base64 into a review.
"""

from __future__ import annotations

import difflib
import hashlib
from typing import Any

from promptops.errors import RenderError
from promptops.pipeline.bundle import Bundle
from promptops.pipeline.source import Source
from promptops.render.mcp import error_code
from promptops.render.renderer import Renderer

Lines = list[str]


def render_lines(renderer: Renderer, prompt: str, arguments: dict[str, Any]) -> Lines:
    """The GetPromptResult of one request as lines; a failure is rendered as its error."""
    try:
        result = renderer.get(prompt, arguments)
    except RenderError as exc:
        return [f"error {error_code(exc)}: {exc}"]
    lines: Lines = []
    for i, msg in enumerate(result["messages"]):
        content = msg["content"]
        lines.append(f"=== message {i} · {msg['role']} · {content['type']} ===")
        lines.extend(_content_lines(content))
    return lines


def _content_lines(content: dict[str, Any]) -> Lines:
    kind = content["type"]
    if kind == "text":
        return str(content["text"]).splitlines()
    if kind in ("image", "audio"):
        return [f"<{content['mimeType']}, {_blob(content['data'])}>"]
    if kind == "resource":
        res = content["resource"]
        head = f"<resource {res['uri']} {res.get('mimeType', '')}>".replace(" >", ">")
        if "text" in res:
            return [head, *str(res["text"]).splitlines()]
        return [head, f"<{_blob(res['blob'])}>"]
    if kind == "resource_link":
        extras = " ".join(f"{k}={content[k]!r}" for k in ("name", "title", "mimeType", "size")
                          if k in content)
        return [f"<link {content['uri']} {extras}>".replace(" >", ">")]
    return [repr(content)]


def _blob(data: str) -> str:
    raw_len = len(data) * 3 // 4 - data.count("=")
    return f"{raw_len} bytes, sha256 {hashlib.sha256(data.encode()).hexdigest()[:12]}"


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


def reached_templates(bundle: Bundle, prompt: dict[str, Any]) -> dict[str, str]:
    """Template files a prompt reaches transitively; the diff engine's own walk."""
    from promptops.diff.engine import _reached

    return _reached(bundle, prompt)
