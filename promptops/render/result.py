"""What ``prompts/get`` returns, as types: MCP's content blocks and GetPromptResult.

The renderer builds these and everything that shows a rendered prompt reads them: the
test runner's expectations and snapshots, ``promptops render``, the review's rendered
diffs (:mod:`~.transcript`) and serve, which adapts each block to the client's
protocol revision. Like the bundle types, they cost nothing to import.

No ``from __future__ import annotations`` here, for the reason given in
:mod:`promptops.pipeline.bundle_types`.
"""

from typing import Literal, NotRequired, TypedDict

from promptops.pipeline.bundle_types import Annotations, ServedRole


class TextContent(TypedDict):
    type: Literal["text"]
    text: str
    annotations: NotRequired[Annotations]
    _meta: NotRequired[dict[str, object]]  # {"promptops/role": "system"} on a served system message


class MediaContent(TypedDict):
    """An image or audio block: base64 ``data``."""

    type: Literal["image", "audio"]
    data: str
    mimeType: str
    annotations: NotRequired[Annotations]


class ResourceBody(TypedDict):
    uri: str
    mimeType: str
    text: NotRequired[str]
    blob: NotRequired[str]


class EmbeddedResource(TypedDict):
    type: Literal["resource"]
    resource: ResourceBody
    annotations: NotRequired[Annotations]


class ResourceLink(TypedDict):
    type: Literal["resource_link"]
    uri: str
    name: NotRequired[str]
    title: NotRequired[str]
    description: NotRequired[str]
    mimeType: NotRequired[str]
    size: NotRequired[int]
    annotations: NotRequired[Annotations]


Content = TextContent | MediaContent | EmbeddedResource | ResourceLink


class PromptMessage(TypedDict):
    role: ServedRole
    content: Content


class PromptResult(TypedDict):
    """MCP's GetPromptResult as the renderer makes it (serve adds its ``_meta``)."""

    messages: list[PromptMessage]
    description: NotRequired[str]
