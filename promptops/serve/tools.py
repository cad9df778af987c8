"""The tool view of the served bundle: prompts for clients that call tools but never show prompts.

Many MCP hosts and agent loops call tools and never list prompts (no slash-command menu, or
no user at all). ``serve --tools`` (or ``serve.tools`` in a package's ``promptops.yaml``)
answers ``tools/list`` and ``tools/call`` over the *same* snapshot the prompt methods answer
from, in one of two shapes (docs/serve.md, "Prompts as tools"):

* ``catalog``: two tools, ``list_prompts`` (a page of the prompts/list entries) and
  ``get_prompt`` (a name and arguments -> the rendered messages), for agents that discover;
* ``per-prompt``: one tool per prompt, named as the prompt (prompt names already keep to the
  tool-name rules: 1-128 of ``A-Za-z0-9_.-``), whose ``inputSchema`` is the JSON Schema of the
  prompt's typed arguments and whose result carries the messages as structured content.

A tool call is a ``prompts/get`` underneath (:func:`promptops.serve.methods.get_prompt`), so
validation, the render bounds, visibility (each caller's view is its own snapshot), revision
shaping and the traceability ``_meta`` are the prompt path's own, not restated. Only the
error channel differs, as the spec asks: a caller's mistake or a failing render is a result
with ``isError`` (the model can read it and correct itself), with the message ``prompts/get``
would give; an unknown tool or malformed params stay protocol errors.

Nothing here is imported unless a request for a tool arrives (serve's cold path).
"""

from __future__ import annotations

import json
from contextvars import ContextVar
from typing import TYPE_CHECKING, Literal, cast

from promptops.errors import ArgumentError, TemplateError
from promptops.serve.catalog import CatalogError, Snapshot
from promptops.serve.jsonrpc import INVALID_PARAMS, Json, RpcError
from promptops.serve.methods import (
    CATALOG,
    EVERY_ERA,
    PER_PROMPT,
    Call,
    Method,
    get_prompt,
    tool_mode,
)
from promptops.serve.revisions import has_cache_hints, has_icons, has_titles
from promptops.serve.session import Session

if TYPE_CHECKING:
    from promptops.pipeline.bundle_types import Argument, Prompt

LIST_TOOL, GET_TOOL = "list_prompts", "get_prompt"
# Why the last tools/call answered with isError failed (the exception, or None when the
# call named no prompt it could render): the usage counters (usage.py) read it to tell a
# render error from a refused argument, as they do for prompts/get's raised errors.
FAILURE: ContextVar[Exception | None] = ContextVar("promptops_tool_failure", default=None)

# What a tool that renders a prompt returns: GetPromptResult's own fields.
MESSAGES_SCHEMA: Json = {
    "type": "object",
    "properties": {
        "description": {"type": "string"},
        "messages": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"role": {"type": "string", "enum": ["user", "assistant"]},
                               "content": {"type": "object"}},
                "required": ["role", "content"],
            },
        },
    },
    "required": ["messages"],
}
LIST_SCHEMA: Json = {
    "type": "object",
    "properties": {
        "prompts": {"type": "array", "items": {
            "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}},
        "nextCursor": {"type": "string"},
    },
    "required": ["prompts"],
}
# The truth about every tool here: it renders text and touches nothing.
ANNOTATIONS: Json = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True,
                     "openWorldHint": False}


class ToolView:
    """The tools one snapshot offers: made once per (snapshot, default mode), then read."""

    __slots__ = ("catalog", "descriptors", "names", "per_prompt")

    def __init__(self, snap: Snapshot, default: str | None) -> None:
        catalog: list[str] = []
        per_prompt: dict[str, str] = {}
        for bundle in snap.bundles:
            mode = tool_mode(bundle, default)
            names = sorted(p["name"] for p in bundle["prompts"])
            if mode == CATALOG:
                catalog += names
            elif mode == PER_PROMPT:
                per_prompt.update((n, n) for n in names)
        self.catalog = tuple(sorted(catalog))  # prompts reached through list/get_prompt
        self.per_prompt = per_prompt  # tool name -> prompt name
        both = (LIST_TOOL, GET_TOOL) if self.catalog else ()
        self.names = (*both, *sorted(per_prompt))  # the one tools/list order
        self.descriptors: dict[tuple[str, str], Json] = {}  # by (tool, revision)


def view(snap: Snapshot, default: str | None) -> ToolView:
    """The snapshot's tool view (cached on the snapshot: swapped with it)."""
    key = ("tools", default)
    found = snap.extras.get(key)
    if found is None:
        found = snap.extras[key] = ToolView(snap, default)
    return cast(ToolView, found)


# ---- descriptors -----------------------------------------------------------------------
def argument_schema(arg: Argument) -> Json:
    """One argument as a JSON Schema property: the same rules prompts/get enforces."""
    kind = arg.get("type", "string")
    prop: Json = {"type": kind}
    for key, value in (arg.get("schema") or {}).items():
        if key != "type":
            prop[key] = value
    for key in ("title", "description", "enum", "examples"):
        if key in arg:
            prop[key] = arg[key]  # type: ignore[literal-required]
    if "pattern" in arg:  # promptops patterns match the whole value (RE2 fullmatch)
        prop["pattern"] = f"^(?:{arg['pattern']})$"
    if "default" in arg:
        prop["default"] = arg["default"]
    if kind == "string" and "maxLength" in arg:
        prop["maxLength"] = arg["maxLength"]
    return prop


def input_schema(prompt: Prompt) -> Json:
    """The prompt's arguments as a tool's inputSchema (unknown arguments are refused)."""
    schema: Json = {"type": "object",
                    "properties": {a["name"]: argument_schema(a) for a in prompt["arguments"]},
                    "additionalProperties": False}
    required = [a["name"] for a in prompt["arguments"] if a.get("required")]
    if required:
        schema["required"] = required
    return schema


def _descriptor(snap: Snapshot, tools: ToolView, name: str, rev: str) -> Json:
    key = (name, rev)
    hit = tools.descriptors.get(key)
    if hit is not None:
        return hit
    titled = has_titles(rev)
    if name == LIST_TOOL:
        out: Json = {"name": name, "description": "Lists the prompts this server offers, a page "
                     "at a time: name, title, description and arguments of each. Pass the "
                     "returned nextCursor as `cursor` for the next page.",
                     "inputSchema": {"type": "object", "properties": {"cursor": {
                         "type": "string", "description": "nextCursor of the previous page"}},
                         "additionalProperties": False}}
        title, output = "List prompts", LIST_SCHEMA
    elif name == GET_TOOL:
        out = {"name": name, "description": "Renders a prompt with arguments and returns its "
               "messages, exactly as prompts/get does. Call list_prompts to learn the names "
               "and arguments.",
               "inputSchema": {"type": "object", "properties": {
                   "name": {"type": "string", "description": "the prompt's name"},
                   "arguments": {"type": "object", "description": "the prompt's arguments by "
                                 "name", "additionalProperties": True}},
                   "required": ["name"], "additionalProperties": False}}
        title, output = "Get prompt", MESSAGES_SCHEMA
    else:
        prompt = snap.index[tools.per_prompt[name]].prompt
        out = {"name": name}
        title = prompt.get("title") or name
        out["description"] = prompt.get("description") or f"Renders the prompt {name!r}."
        out["inputSchema"] = input_schema(prompt)
        output = MESSAGES_SCHEMA
        if has_icons(rev) and "icons" in prompt:
            out["icons"] = prompt["icons"]
    if titled:
        out["title"] = title
        out["outputSchema"] = output
    if rev >= "2025-03-26":  # ToolAnnotations arrived in 2025-03-26
        out["annotations"] = {"title": title, **ANNOTATIONS}
    tools.descriptors[key] = out
    return out


# ---- handlers ----------------------------------------------------------------------------
def list_tools(session: Session, snap: Snapshot, params: Json, call: Call) -> Json:
    tools = view(snap, call.settings.tools)
    names, nxt = snap.page("tools", tools.names, params.get("cursor"), call.settings.page_size,
                           call.settings.signer)
    out: Json = {"tools": [_descriptor(snap, tools, n, call.revision) for n in names]}
    if nxt:
        out["nextCursor"] = nxt
    if has_cache_hints(call.revision):
        out["ttlMs"], out["cacheScope"] = call.settings.ttl_ms, snap.cache_scope
    return out


def call_tool(session: Session, snap: Snapshot, params: Json, call: Call) -> Json:
    name, args = params.get("name"), params.get("arguments")
    if not isinstance(name, str):
        raise RpcError(INVALID_PARAMS, "tools/call needs a tool `name` (a string)")
    if args is not None and not isinstance(args, dict):
        raise RpcError(INVALID_PARAMS, "tools/call `arguments` must be an object")
    args = args or {}
    tools = view(snap, call.settings.tools)
    # An input request cannot be answered inside a tool call: the tool reports what is missing.
    plain = Call(call.id, call.revision, {}, call.settings)
    try:
        if name in tools.per_prompt:
            return _rendered(session, snap, tools.per_prompt[name], args, plain)
        if tools.catalog and name == LIST_TOOL:
            return _listed(snap, tools, args, call)
        if tools.catalog and name == GET_TOOL:
            prompt, pargs = args.get("name"), args.get("arguments")
            if not isinstance(prompt, str):
                return _failed("get_prompt needs a prompt `name` (a string)")
            if prompt not in snap.index or prompt not in tools.catalog:
                return _failed(f"unknown prompt {prompt!r}")
            if pargs is not None and not isinstance(pargs, dict):
                return _failed("`arguments` must be an object")
            return _rendered(session, snap, prompt, pargs or {}, plain)
    except (ArgumentError, TemplateError, CatalogError) as exc:
        FAILURE.set(exc)
        return _failed(str(exc))
    except RpcError as exc:  # prompts/get's own refusal of an argument value
        if exc.code != INVALID_PARAMS:
            raise
        FAILURE.set(exc)
        return _failed(exc.message)
    raise RpcError(INVALID_PARAMS, f"unknown tool {name[:100]!r}")


def prompt_of(snap: Snapshot, params: Json, call: Call) -> str | Literal[False] | None:
    """The prompt a tools/call renders (for the usage counters: a call of a prompt's tool,
    or of ``get_prompt``, is a use of that prompt); None when it names no prompt this view
    offers; False for ``list_prompts``, which uses none."""
    name = params.get("name")
    if not isinstance(name, str):
        return None
    tools = view(snap, call.settings.tools)
    if name in tools.per_prompt:
        return tools.per_prompt[name]
    if tools.catalog and name == GET_TOOL:
        args = params.get("arguments")
        prompt = args.get("name") if isinstance(args, dict) else None
        return prompt if isinstance(prompt, str) and prompt in tools.catalog else None
    if tools.catalog and name == LIST_TOOL:
        return False
    return None


def _rendered(session: Session, snap: Snapshot, prompt: str, args: Json, call: Call) -> Json:
    result = get_prompt(session, snap, {"name": prompt, "arguments": args}, call)
    structured: Json = {k: result[k] for k in ("description", "messages") if k in result}
    return _result(structured, call.revision, result.get("_meta"))


def _listed(snap: Snapshot, tools: ToolView, args: Json, call: Call) -> Json:
    unknown = sorted(set(args) - {"cursor"})
    if unknown:
        return _failed(f"unknown argument {unknown[0]!r}: list_prompts takes only `cursor`")
    names, nxt = snap.page("tool-prompts", tools.catalog, args.get("cursor"),
                           call.settings.page_size, call.settings.signer)
    structured: Json = {"prompts": [snap.descriptor(n, call.revision) for n in names]}
    if nxt:
        structured["nextCursor"] = nxt
    return _result(structured, call.revision, None)


def _result(structured: Json, rev: str, meta: Json | None) -> Json:
    """A CallToolResult: the structure as JSON text (for every revision) and, from
    2025-06-18 on, as ``structuredContent`` checked against the tool's outputSchema."""
    out: Json = {"content": [{"type": "text",
                              "text": json.dumps(structured, ensure_ascii=False)}]}
    if has_titles(rev):
        out["structuredContent"] = structured
    if meta is not None:
        out["_meta"] = meta
    return out


def _failed(message: str) -> Json:
    return {"content": [{"type": "text", "text": message}], "isError": True}


TOOL_METHODS: dict[str, Method] = {
    "tools/list": Method(list_tools, EVERY_ERA, "tools"),
    "tools/call": Method(call_tool, EVERY_ERA, "tools"),
}
