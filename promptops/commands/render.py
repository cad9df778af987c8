"""`promptops render`: what a client would receive for prompts/get, on the terminal."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from promptops.commands._common import package_dir, parse_arguments
from promptops.console import echo, style
from promptops.pipeline.build import bundle_at
from promptops.render.renderer import Renderer


def run(
    prompt: str,
    pairs: list[str],
    args_file: Path | None,
    path: Path | None,
    ref: str | None,
    fmt: str,
) -> int:
    arguments = parse_arguments(pairs, args_file)
    bundle = bundle_at(package_dir(path), ref)
    result = Renderer(bundle).get(prompt, arguments)  # a RenderError says what is wrong
    if fmt == "json":
        echo(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        echo(transcript(result))
    return 0


def transcript(result: dict[str, Any]) -> str:
    """A readable rendering: one block per message, headed by its role and content type."""
    parts: list[str] = []
    for i, msg in enumerate(result["messages"]):
        content = msg["content"]
        kind = content["type"]
        head = style(f"── {msg['role']}", bold=True) + (f" ({kind})" if kind != "text" else "")
        parts.append(head if i == 0 else "\n" + head)
        parts.append(_body(content))
    return "\n".join(parts)


def _body(content: dict[str, Any]) -> str:
    kind = content["type"]
    if kind == "text":
        return str(content["text"]).rstrip("\n")
    if kind in ("image", "audio"):
        return f"[{content['mimeType']}, {len(content['data']) * 3 // 4} bytes]"
    if kind == "resource":
        res = content["resource"]
        body = res.get("text") if "text" in res else f"[{len(res['blob']) * 3 // 4} bytes]"
        return f"{res['uri']} ({res['mimeType']})\n{str(body).rstrip(chr(10))}"
    return f"{content.get('name', '')} -> {content['uri']}"
