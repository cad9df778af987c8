"""The package format as pydantic models: the contract users write.

Frozen and ``extra="forbid"`` so a typo in a key is an error rather than silently
ignored, and strict so ``required: "yes"`` is not quietly read as true. The JSON
Schemas that editors use (``promptops schema``) are generated from these classes.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from promptops.pipeline import defaults
from promptops.sandbox import limits as bounds

NAME_RE = r"^[a-z0-9]([a-z0-9._-]{0,62}[a-z0-9])?$"
PROMPT_NAME_RE = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$"
ARG_NAME_RE = r"^[A-Za-z_][A-Za-z0-9_]*$"
SEMVER_RE = (
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)


class Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


class LintConfig(Strict):
    select: list[str] = Field(default_factory=list, description="Rule codes or names to run")
    ignore: list[str] = Field(default_factory=list, description="Rule codes or names to skip")
    maxTemplateChars: int = Field(default=defaults.MAX_TEMPLATE_CHARS, ge=1,
                                  description="PO508: longest template")
    maxIncludeDepth: int = Field(default=defaults.MAX_INCLUDE_DEPTH, ge=1,
                                 description="PO303: deepest include chain")


class ServeConfig(Strict):
    cacheScope: Literal["public", "private"] = Field(
        default="public", description="cacheScope on stateless-era list results"
    )


class LimitsConfig(Strict):
    """Bounds of one prompts/get request (defaults and hard caps: promptops/limits.py)."""

    renderTimeoutMs: int = Field(
        default=bounds.DEFAULT_TIMEOUT_MS, ge=1, le=bounds.MAX_TIMEOUT_MS,
        description="Wall-clock budget of one request: validation, matching, every template")
    maxOutputChars: int = Field(
        default=bounds.DEFAULT_OUTPUT_CHARS, ge=1, le=bounds.MAX_OUTPUT_CHARS,
        description="Characters of the whole reply, and of any one value a template builds")


class Manifest(Strict):
    """promptops.yaml: the package's identity."""

    name: str = Field(pattern=NAME_RE, description="Package name")
    version: str = Field(pattern=SEMVER_RE, description="SemVer 2.0.0 version")
    description: str | None = None
    instructions: str | None = Field(None, description="Served as the MCP server instructions")
    lint: LintConfig = Field(default_factory=lambda: LintConfig())
    serve: ServeConfig = Field(default_factory=lambda: ServeConfig())
    limits: LimitsConfig | None = Field(
        None, description="Request bounds, within the hard caps (docs in SECURITY.md)")


class Icon(Strict):
    src: str
    mimeType: str | None = None
    sizes: list[str] | None = None
    theme: Literal["light", "dark"] | None = None


class Argument(Strict):
    name: str = Field(pattern=ARG_NAME_RE)
    title: str | None = None
    description: str | None = None
    required: bool = False
    default: str | None = Field(None, description="Value of an absent optional argument")
    enum: list[str] | None = Field(None, description="Allowed values; the completion source")
    pattern: str | None = Field(
        None, description="An RE2 regular expression the whole value must match")
    maxLength: int = Field(defaults.MAX_LENGTH, ge=1)
    # Fields in reading order: lint's key order (PO108) is this order.
    examples: list[str] | None = Field(None, description="Completion values, not enforced")

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None:
            from promptops.sandbox.patterns import PatternError, compile_pattern

            try:
                compile_pattern(value)
            except PatternError as exc:
                raise ValueError(str(exc)) from None
        return value


class Annotations(Strict):
    audience: list[Literal["user", "assistant"]] | None = None
    priority: Annotated[float, Field(ge=0, le=1)] | None = None
    lastModified: str | None = None

    @field_validator("priority", mode="before")
    @classmethod
    def _int_ok(cls, value: object) -> object:
        return float(value) if isinstance(value, int) and not isinstance(value, bool) else value


class ResourceBody(Strict):
    uri: str = Field(description="A template")
    mimeType: str | None = None
    text: str | None = Field(None, description="A template")
    file: str | None = Field(None, description="Package file: text for text/* and JSON, else blob")

    @model_validator(mode="after")
    def _one_body(self) -> ResourceBody:
        if (self.text is None) == (self.file is None):
            raise ValueError("a resource needs exactly one of `text` or `file`")
        return self


class MediaFile(Strict):
    file: str
    mimeType: str | None = None


class ResourceLinkBody(Strict):
    uri: str = Field(description="A template")
    name: str
    title: str | None = None
    description: str | None = None
    mimeType: str | None = None
    size: int | None = Field(None, ge=0)


CONTENT_KEYS = ("text", "template", "resource", "image", "audio", "resource_link")


class Message(Strict):
    role: Literal["user", "assistant"]
    text: str | None = Field(None, description="An inline Jinja2 template")
    template: str | None = Field(None, description="A Jinja2 template file, package-relative")
    resource: ResourceBody | None = None
    image: MediaFile | None = None
    audio: MediaFile | None = None
    resource_link: ResourceLinkBody | None = None
    annotations: Annotations | None = None

    @model_validator(mode="after")
    def _one_content(self) -> Message:
        given = [k for k in CONTENT_KEYS if getattr(self, k) is not None]
        if len(given) != 1:
            found = ", ".join(given) if given else "none"
            raise ValueError(
                f"a message needs exactly one content key of {', '.join(CONTENT_KEYS)} "
                f"(found: {found})"
            )
        return self

    @property
    def kind(self) -> str:
        return next(k for k in CONTENT_KEYS if getattr(self, k) is not None)


class PromptFile(Strict):
    """prompts/**/*.prompt.yaml: one MCP prompt."""

    name: str | None = Field(None, pattern=PROMPT_NAME_RE, description="Default: file name")
    title: str | None = None
    description: str | None = None
    resultDescription: str | Literal[False] | None = Field(
        default=None,
        description="The prompts/get result's description: a template rendered with the "
        "arguments, or false to send none; absent: the prompt's description",
    )
    icons: list[Icon] | None = None
    arguments: list[Argument] = Field(default_factory=list)
    messages: list[Message] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_arguments(self) -> PromptFile:
        seen: set[str] = set()
        for arg in self.arguments:
            if arg.name in seen:
                raise ValueError(f"argument {arg.name!r} is declared twice")
            seen.add(arg.name)
        return self
