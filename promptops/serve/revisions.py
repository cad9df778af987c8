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


# What a client may ask, per revision (the ClientRequest union of each official schema),
# beyond the methods this server answers: a -32601 then says why, truthfully.
_FEATURES = {"tools/list": "tools", "tools/call": "tools", "tasks/get": "tasks",
             "tasks/result": "tasks", "tasks/cancel": "tasks", "tasks/list": "tasks",
             "resources/subscribe": "resource subscriptions",
             "resources/unsubscribe": "resource subscriptions"}
_SERVER_SENT = ("sampling/createMessage", "roots/list", "elicitation/create")
_HANDSHAKE_ONLY = ("initialize", "ping", "logging/setLevel", "resources/subscribe",
                   "resources/unsubscribe", "tasks/get", "tasks/result", "tasks/cancel",
                   "tasks/list")
_MODERN_ONLY = ("server/discover", "subscriptions/listen")


def defines(rev: str, method: str) -> bool:
    """Whether ``method`` is a client request in revision ``rev``'s schema."""
    if method in _MODERN_ONLY:
        return rev == MODERN
    if method in _HANDSHAKE_ONLY:
        return rev != MODERN and (not method.startswith("tasks/") or at_least(rev, "2025-11-25"))
    return method in _FEATURES or method in (
        "prompts/list", "prompts/get", "completion/complete", "resources/list",
        "resources/read", "resources/templates/list")


def why_not_offered(method: str, rev: str) -> str:
    """The -32601 message for a method this server does not answer on revision ``rev``."""
    shown = method if len(method) <= 100 else method[:100] + "..."
    if defines(rev, method) and method in _FEATURES:
        return f"this server offers no {_FEATURES[method]} (it serves prompts): {shown!r}"
    if method in _SERVER_SENT:
        return f"{shown!r} is a request a server sends to its client, not one it answers"
    if method in _MODERN_ONLY or method in _HANDSHAKE_ONLY or method in _FEATURES:
        why = ("the stateless revision has no initialize, ping, logging/setLevel, resource "
               "subscriptions or tasks") if rev == MODERN else "negotiated with initialize"
        return f"method {shown!r} is not part of revision {rev} ({why})"
    return f"unknown method {shown!r}"
