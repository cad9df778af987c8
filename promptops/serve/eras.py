"""What each MCP revision can carry, and how richer content degrades for older clients.

A client that negotiated an old revision may reject (or silently drop) fields its schema
does not know, so every outgoing prompt descriptor and content block passes through here
with the connection's revision. Degrading keeps the information where the old schema has
room for it instead of dropping it.
"""

from __future__ import annotations

from typing import Any

MODERN = "2026-07-28"
HANDSHAKE = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
LATEST_HANDSHAKE = HANDSHAKE[0]
SUPPORTED = (MODERN, *HANDSHAKE)

Json = dict[str, Any]


def at_least(revision: str, first: str) -> bool:
    """Revisions are ISO dates, so string order is release order."""
    return revision >= first


def has_titles(rev: str) -> bool:
    return at_least(rev, "2025-06-18")


def has_icons(rev: str) -> bool:
    return at_least(rev, "2025-11-25")


def has_audio(rev: str) -> bool:
    return at_least(rev, "2025-03-26")


def has_resource_link(rev: str) -> bool:
    return at_least(rev, "2025-06-18")


def has_completions_capability(rev: str) -> bool:
    return at_least(rev, "2025-03-26")


def prompt_descriptor(prompt: Json, rev: str) -> Json:
    """The prompts/list entry: only the fields the revision's `Prompt` defines."""
    out: Json = {"name": prompt["name"]}
    if has_titles(rev) and "title" in prompt:
        out["title"] = prompt["title"]
    if "description" in prompt:
        out["description"] = prompt["description"]
    args = []
    for a in prompt["arguments"]:
        arg: Json = {"name": a["name"]}
        if has_titles(rev) and "title" in a:
            arg["title"] = a["title"]
        if "description" in a:
            arg["description"] = a["description"]
        arg["required"] = bool(a.get("required"))  # explicit, as the spec's examples show
        args.append(arg)
    if args:
        out["arguments"] = args
    if has_icons(rev) and "icons" in prompt:
        out["icons"] = prompt["icons"]
    return out


def _annotations(ann: Json, rev: str) -> Json:
    if has_titles(rev):
        return ann
    return {k: v for k, v in ann.items() if k != "lastModified"}


def content(block: Json, source: Json, uri_of: Any, rev: str) -> Json:
    """One rendered content block shaped for ``rev``.

    ``source`` is the bundle message it came from (for the file an audio clip was read
    from); ``uri_of(path)`` gives that file's resource URI.
    """
    kind = block["type"]
    if kind == "audio" and not has_audio(rev):
        # 2024-11-05 has no AudioContent but does embed blobs: same bytes, same type.
        block = {
            "type": "resource",
            "resource": {
                "uri": uri_of(source["file"]),
                "mimeType": block["mimeType"],
                "blob": block["data"],
            },
            **({"annotations": block["annotations"]} if "annotations" in block else {}),
        }
    elif kind == "resource_link" and not has_resource_link(rev):
        label = block.get("title") or block["name"]
        text = f"{label}: {block['uri']}"
        if "description" in block:
            text += f"\n{block['description']}"
        block = {
            "type": "text",
            "text": text,
            **({"annotations": block["annotations"]} if "annotations" in block else {}),
        }
    elif kind == "resource_link" and not has_icons(rev):
        block = {k: v for k, v in block.items() if k != "icons"}
    if kind == "resource_link" and not has_titles(rev):
        block = {k: v for k, v in block.items() if k != "title"}
    if "annotations" in block:
        ann = _annotations(block["annotations"], rev)
        block = {**block, "annotations": ann} if ann else {
            k: v for k, v in block.items() if k != "annotations"
        }
    return block


def resource_descriptor(uri: str, path: str, res: Json, rev: str) -> Json:
    """A resources/list entry for one package file."""
    out: Json = {"uri": uri, "name": path, "mimeType": res["mimeType"]}
    if has_titles(rev):
        out["title"] = path.rsplit("/", 1)[-1]
    return out
