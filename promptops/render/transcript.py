"""Rendered prompts for a person to read: the terminal, a review diff, a test failure.

Three views of the same ``prompts/get`` result, each with its own audience: ``promptops
render`` prints a transcript headed by role (:func:`terminal`); a review diffs lines that
say which message and what kind of content changed, binary content summarised by size
and hash (:func:`review_lines`); a failing test shows a transcript compared line by line
with the expected one (:func:`test_transcript`). What a content block holds is read in
one place, :func:`parts`, so a new content kind is added here once for all three.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from promptops.render.result import Content, PromptMessage, PromptResult

LINK_DETAILS = ("name", "title", "mimeType", "size")  # what a review shows of a resource link


@dataclass(frozen=True)
class Parts:
    """A content block, whatever its kind: its text and what else a person needs."""

    kind: str  # text | image | audio | resource | resource_link
    text: str | None = None  # text content, or an embedded resource's text
    data: str | None = None  # base64: image or audio data, a resource's blob
    uri: str | None = None  # a resource's or a link's
    mime: str | None = None
    name: str = ""  # a link's name
    details: tuple[tuple[str, object], ...] = ()  # a link's name, title, mimeType, size


def parts(content: Content) -> Parts:
    """The one switch over MCP's content kinds."""
    if content["type"] == "text":
        return Parts("text", text=content["text"])
    if content["type"] == "image" or content["type"] == "audio":
        return Parts(content["type"], data=content["data"], mime=content["mimeType"])
    if content["type"] == "resource":
        res = content["resource"]
        return Parts("resource", text=res.get("text"), data=res.get("blob"), uri=res["uri"],
                     mime=res.get("mimeType"))
    link = content  # a resource_link (or, in a hand-edited snapshot, a kind unknown here)
    shown = tuple((k, link[k]) for k in LINK_DETAILS if k in link)  # type: ignore[literal-required]
    return Parts(str(link["type"]), uri=link["uri"], mime=link.get("mimeType"),
                 name=link.get("name", ""), details=shown)


def approx_size(data: str) -> int:
    """Bytes a base64 string decodes to, as the terminal and test transcripts count them
    (padding included: at most two bytes over)."""
    return len(data) * 3 // 4


def blob_summary(data: str) -> str:
    """Exact decoded size and a short hash: enough to see that binary content changed."""
    raw_len = approx_size(data) - data.count("=")
    return f"{raw_len} bytes, sha256 {hashlib.sha256(data.encode()).hexdigest()[:12]}"


def role_label(message: PromptMessage) -> str:
    """The role as authored and, when it differs, as served: a ``role: system`` message goes
    out in the package's ``serve.systemRole`` (MCP has no system role), marked in its
    ``_meta``, so a person reads ``system (served as user)``, never a bare ``user`` that
    hides the author's intent nor a bare ``system`` that hides what a client receives."""
    meta = message["content"].get("_meta")
    if isinstance(meta, dict) and meta.get("promptops/role") == "system":
        return f"system (served as {message['role']})"
    return message["role"]


def terminal(result: PromptResult, bold: Callable[[str], str] = str) -> str:
    """``promptops render``: one block per message, headed by its role and content kind."""
    out: list[str] = []
    for i, msg in enumerate(result["messages"]):
        p = parts(msg["content"])
        head = bold(f"── {role_label(msg)}") + (f" ({p.kind})" if p.kind != "text" else "")
        out.append(head if i == 0 else "\n" + head)
        out.append(_terminal_body(p))
    return "\n".join(out)


def _terminal_body(p: Parts) -> str:
    if p.kind == "text":
        return str(p.text).rstrip("\n")
    if p.kind in ("image", "audio"):
        return f"[{p.mime}, {approx_size(p.data or '')} bytes]"
    if p.kind == "resource":
        body = p.text if p.text is not None else f"[{approx_size(p.data or '')} bytes]"
        return f"{p.uri} ({p.mime})\n{body.rstrip(chr(10))}"
    return f"{p.name} -> {p.uri}"


def review_lines(result: PromptResult) -> list[str]:
    """A review's view: a header line per message, then its content as lines.

    Messages are numbered from 1, as a person counts and as the change list names them
    (``template text changed (message 1)``)."""
    lines: list[str] = []
    for i, msg in enumerate(result["messages"], 1):
        p = parts(msg["content"])
        lines.append(f"=== message {i} · {role_label(msg)} · {p.kind} ===")
        lines.extend(_review_body(p))
    return lines


def _review_body(p: Parts) -> list[str]:
    if p.kind == "text":
        return str(p.text).splitlines()
    if p.kind in ("image", "audio"):
        return [f"<{p.mime}, {blob_summary(p.data or '')}>"]
    if p.kind == "resource":
        head = f"<resource {p.uri} {p.mime or ''}>".replace(" >", ">")
        if p.text is not None:
            return [head, *p.text.splitlines()]
        return [head, f"<{blob_summary(p.data or '')}>"]
    extras = " ".join(f"{k}={v!r}" for k, v in p.details)
    return [f"<link {p.uri} {extras}>".replace(" >", ">")]


def test_transcript(messages: Sequence[PromptMessage]) -> str:
    """A failing test's view: messages as text with roles, what a failure diff compares."""
    out: list[str] = []
    for i, msg in enumerate(messages):
        p = parts(msg["content"])
        role = msg["role"]
        if p.kind == "text":
            out += [f"── [{i}] {role}", *str(p.text).splitlines()]
        elif p.kind == "resource":
            out.append(f"── [{i}] {role} (resource {p.uri} {p.mime})")
            out += (str(p.text).splitlines() if p.text is not None
                    else [f"[blob {(p.data or '')[:24]}…]"])
        elif p.kind in ("image", "audio"):
            data = p.data or ""
            out.append(f"── [{i}] {role} ({p.kind} {p.mime}, {approx_size(data)} bytes, "
                       f"data {data[:16]}…)")
        else:
            out.append(f"── [{i}] {role} ({p.kind} {p.name} -> {p.uri})")
    return "\n".join(out) + "\n"


def searchable_text(message: PromptMessage) -> str:
    """What a test's ``contains``/``matches`` search: text, and an embedded resource's text."""
    p = parts(message["content"])
    return (p.text or "") if p.kind in ("text", "resource") else ""
