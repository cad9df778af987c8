"""The bundle format as pydantic models: its documentation and its full validation.

Serving never imports this (``bundle.parse_bundle`` does the cheap checks with the
standard library); ``promptops verify`` and ``promptops schema bundle`` do.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from promptops.pipeline.manifest import LimitsConfig
from promptops.pipeline.model import (
    Annotations,
    Argument,
    Icon,
    Model,
    Output,
    Role,
    Sample,
    Tool,
    WhitespaceMode,
)


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


class BundlePackage(_Strict):
    name: str
    version: str
    description: str | None = None
    instructions: str | None = None
    cacheScope: Literal["public", "private"]
    limits: LimitsConfig | None = Field(None, description="Request bounds that differ from "
                                        "the defaults")
    systemRole: Literal["user", "assistant"] | None = Field(
        None, description="How a system message is served (absent: user)")
    tools: Literal["off", "catalog", "per-prompt"] | None = Field(
        None, description="The tool view the package is offered in (absent: as `serve --tools`)")
    whitespace: WhitespaceMode | None = Field(
        None, description="The templates' whitespace mode (absent: a bundle built before the "
        "modes, rendered with trim_blocks + lstrip_blocks)")


class BundleMessage(_Strict):
    role: Role | None = Field(None, description="As written; absent on a history item")
    type: Literal["text", "image", "audio", "resource", "resource_link", "history"]
    argument: str | None = Field(None, description="history: the array argument spliced in")
    strip: bool | None = Field(None, description="history: strip each message's text")
    omitIfBlank: bool | None = Field(None, description="Not sent when it renders blank")
    loopItem: str | None = Field(None, description="for: the item's name; the message repeats "
                                 "for each item of `loopOver` (consecutive ones as a group)")
    loopOver: str | None = Field(None, description="for: the array argument looped over")
    continues: bool | None = Field(None, description="A further part of the message before "
                                   "it (served as a message of its own)")
    text: str | None = Field(None, description="Inline template (text) or resource text template")
    template: str | None = Field(None, description="Key into `templates`")
    file: str | None = Field(None, description="Key into `resources`")
    uri: str | None = Field(None, description="Template (resource, resource_link)")
    mimeType: str | None = None
    name: str | None = None
    title: str | None = None
    description: str | None = None
    size: int | None = None
    annotations: Annotations | None = None


class BundlePrompt(_Strict):
    name: str
    title: str | None = None
    description: str | None = None
    resultDescription: str | Literal[False] | None = None
    icons: list[Icon] | None = None
    arguments: list[Argument]
    messages: list[BundleMessage]
    source: str = Field(description="The prompt file, relative to the package")
    model: Model | None = Field(None, description="Carried, served in _meta")
    tools: list[Tool] | None = Field(None, description="Carried, served in _meta")
    output: Output | None = Field(None, description="Carried, served in _meta")
    samples: list[Sample] | None = Field(None, description="Named argument sets")
    metadata: dict[str, JsonValue] | None = Field(None, description="Carried, served in _meta")
    whitespace: WhitespaceMode | None = Field(None, description="Over the package's mode")

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True,
                              protected_namespaces=())


class BundleResource(_Strict):
    mimeType: str
    text: str | None = None
    blob: str | None = Field(None, description="base64")


class BundleSource(_Strict):
    commit: str | None
    tree: str | None
    dirty: bool
    path: str = Field(description="Package folder relative to the repository root")


class BundleFile(_Strict):
    """A built bundle: canonical JSON; `digest` is sha256 over all other keys."""

    format: Literal["promptops.bundle/1"]
    package: BundlePackage
    prompts: list[BundlePrompt]
    templates: dict[str, str] = Field(description="Every template file reached, by path")
    resources: dict[str, BundleResource]
    source: BundleSource
    digest: str = Field(pattern=r"^sha256:[0-9a-f]{64}$")
