"""What each MCP revision carries, and how richer content degrades for older clients.

Revisions come in two eras, and a connection (or, over HTTP, a request) belongs to one:
the *session* era (2024-11-05 .. 2025-11-25) negotiates a revision once with
``initialize``; the *stateless* era (2026-07-28) carries the revision and the client's
capabilities in every request's ``_meta`` envelope. :class:`Era` names them, so that no
code compares era strings; revisions are ISO dates, and every question about one ("does
it have titles?") is a helper here, so no module compares revision strings itself.

A client that negotiated an old revision may reject (or silently drop) fields its schema
does not know, so every outgoing prompt descriptor and content block passes through here
with the connection's revision. Degrading keeps the information where the old schema has
room for it instead of dropping it.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from typing import TYPE_CHECKING

from promptops.serve.jsonrpc import Json

if TYPE_CHECKING:  # the bundle's shape: zero import cost
    from promptops.pipeline.bundle_types import Message, Prompt, Resource

STATELESS_REVISIONS = ("2026-07-28",)
SESSION_REVISIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
LATEST_STATELESS = STATELESS_REVISIONS[0]
LATEST_SESSION = SESSION_REVISIONS[0]
SUPPORTED = (*STATELESS_REVISIONS, *SESSION_REVISIONS)

# The 2026-07-28 envelope: keys of a request's (and a result's) `_meta`.
META_PREFIX = "io.modelcontextprotocol/"
META_VERSION = META_PREFIX + "protocolVersion"
META_CAPS = META_PREFIX + "clientCapabilities"
META_SERVER = META_PREFIX + "serverInfo"
META_SUB = META_PREFIX + "subscriptionId"
META_LOG_LEVEL = META_PREFIX + "logLevel"


class Era(Enum):
    """How a client holds its conversation with the server."""

    SESSION = "session"  # negotiated once: initialize, then requests on that connection
    STATELESS = "stateless"  # every request carries its revision and capabilities


# The members as module names, for the per-request path: `Era.X` is a class-attribute
# look-up through the enum machinery (~40 ns in CPython 3.11), `X` a plain global.
SESSION, STATELESS = Era.SESSION, Era.STATELESS


def era_of(revision: str) -> Era:
    return STATELESS if revision in STATELESS_REVISIONS else SESSION


def request_era(method: object, params: Json, *, named: str | None = None,
                joined: bool = False) -> Era | None:
    """The era a request opens, or over HTTP belongs to: the one rule of every transport.

    Stateless: a revision of that era named outside the body (``named``: HTTP's
    ``MCP-Protocol-Version`` header), or the envelope (a ``_meta`` naming its
    ``protocolVersion`` or its ``clientCapabilities``: a client that sends either speaks
    the stateless era, and one that left out the other key is told which (-32602), not
    "not initialized"; other ``io.modelcontextprotocol/`` keys, such as 2025-11-25's
    ``related-task``, travel in session-era requests too). Then a request that names a
    session it joins (``joined``: HTTP's ``Mcp-Session-Id``) is of that session;
    ``server/discover`` is stateless and ``initialize`` opens a session; anything else
    decides nothing (stdio's first request: "not initialized").
    """
    if named in STATELESS_REVISIONS:
        return STATELESS
    meta = params.get("_meta")
    if isinstance(meta, dict) and (META_VERSION in meta or META_CAPS in meta):
        return STATELESS  # an initialize with the envelope too: it is then not offered
    if joined:
        return SESSION
    if method == "server/discover":
        return STATELESS
    if method == "initialize":
        return SESSION
    return None


def at_least(revision: str, first: str) -> bool:
    """Revisions are ISO dates, so string order is release order."""
    return revision >= first


def since(first: str) -> Callable[[str], bool]:
    """The question "does this revision have it?" for something added in ``first``."""
    return lambda rev: rev >= first


# What each revision carries, by the first revision that has it.
has_audio = since("2025-03-26")  # AudioContent
has_completions_capability = since("2025-03-26")  # the `completions` capability
has_titles = since("2025-06-18")  # `title` on prompts, arguments, resources, links
has_resource_link = since("2025-06-18")  # ResourceLink content
has_icons = since("2025-11-25")  # `icons` on prompts and links
has_cache_hints = since("2026-07-28")  # `ttlMs` and `cacheScope` on every CacheableResult
INPUT_REQUESTS = "2026-07-28"  # the first revision with input requests (methods.get_prompt)
has_input_requests = since(INPUT_REQUESTS)  # multi-round-trip: `input_required` results
resource_not_found_is_invalid_params = since("2026-07-28")  # -32002 became -32602


def allows_batches(rev: str | None) -> bool:
    """JSON-RPC batches are part of 2025-03-26 only (added there, removed in 2025-06-18)."""
    return rev == "2025-03-26"


def null_for_unknown_id(rev: str | None) -> bool:
    """Whether an error reply without a known id says ``"id": null`` (see jsonrpc.null_id).

    Session-era revisions before 2025-11-25 (and a session not yet negotiated) need it.
    """
    return not at_least(rev or "", "2025-11-25")


def prompt_descriptor(prompt: Prompt, rev: str) -> Json:
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
    if has_titles(rev):  # Prompt._meta is defined from 2025-06-18
        meta = carried_meta(prompt)
        if meta:
            out["_meta"] = meta
    return out


CARRIED = ("model", "tools", "output", "samples", "metadata")


def carried_meta(prompt: Prompt) -> Json:
    """What the package carries for a prompt but never acts on, under namespaced keys:
    ``promptops/model``, ``/tools``, ``/output``, ``/samples``, ``/metadata`` as written,
    and ``promptops/arguments``: the type (and schema) of each typed argument."""
    meta: Json = {f"promptops/{key}": prompt[key] for key in CARRIED  # type: ignore[literal-required]
                  if key in prompt}
    typed = {a["name"]: {k: a[k] for k in ("type", "schema") if k in a}
             for a in prompt["arguments"] if "type" in a}
    if typed:
        meta["promptops/arguments"] = typed
    return meta


def _annotations(ann: Json, rev: str) -> Json:
    if has_titles(rev):
        return ann
    return {k: v for k, v in ann.items() if k != "lastModified"}


def content(block: Json, source: Message, uri_of: Callable[[str], str], rev: str) -> Json:
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
    if "_meta" in block and not has_titles(rev):  # content _meta: 2025-06-18 on
        block = {k: v for k, v in block.items() if k != "_meta"}
    if "annotations" in block:
        ann = _annotations(block["annotations"], rev)
        block = {**block, "annotations": ann} if ann else {
            k: v for k, v in block.items() if k != "annotations"
        }
    return block


def resource_descriptor(uri: str, path: str, res: Resource, rev: str) -> Json:
    """A resources/list entry for one package file."""
    out: Json = {"uri": uri, "name": path, "mimeType": res["mimeType"]}
    if has_titles(rev):
        out["title"] = path.rsplit("/", 1)[-1]
    return out


# ---- client requests this server does not answer -----------------------------------
# What a client may ask, per revision (the ClientRequest union of each official schema),
# beyond the methods this server answers (promptops.serve.methods.METHODS): a -32601
# then says why, truthfully.


class Unoffered:
    """A client request of the schemas that belongs to a feature this server lacks."""

    __slots__ = ("feature", "first", "stateless")

    def __init__(self, feature: str, first: str = SESSION_REVISIONS[-1], *,
                 stateless: bool = True) -> None:
        self.feature = feature
        self.first = first  # the first revision that defines it
        self.stateless = stateless  # also defined by the stateless revisions

    def defined(self, rev: str) -> bool:
        return at_least(rev, self.first) and (self.stateless or era_of(rev) is SESSION)


UNOFFERED = {
    "tools/list": Unoffered("tools"),
    "tools/call": Unoffered("tools"),
    **{f"tasks/{verb}": Unoffered("tasks", "2025-11-25", stateless=False)
       for verb in ("get", "result", "cancel", "list")},
    "resources/subscribe": Unoffered("resource subscriptions", stateless=False),
    "resources/unsubscribe": Unoffered("resource subscriptions", stateless=False),
}
SERVER_SENT = ("sampling/createMessage", "roots/list", "elicitation/create")
STATELESS_LACKS = ("the stateless revision has no initialize, ping, logging/setLevel, resource "
                   "subscriptions or tasks")
SESSION_NEEDS = "negotiated with initialize"
