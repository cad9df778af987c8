"""promptops.yaml as pydantic models: the package's identity and its settings.

The manifest is the one file of a package that is not a prompt: its name and version,
how lint, serve and the templates behave, the request bounds and the release channels.
Its models live apart from the prompt file's (:mod:`promptops.pipeline.model`), which they
share only the strict base and the whitespace modes with; ``promptops schema manifest``
is generated from :class:`Manifest`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from promptops.pipeline import defaults
from promptops.pipeline.model import Strict, WhitespaceMode
from promptops.sandbox import limits as bounds

NAME_RE = r"^[a-z0-9]([a-z0-9._-]{0,62}[a-z0-9])?$"
SEMVER_RE = (
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)


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
    systemRole: Literal["user", "assistant"] = Field(
        default="user",
        description="How a `role: system` message is served: MCP prompt messages carry only "
        "user and assistant. `user` (the default) keeps the instruction on the side that gives "
        "instructions; the original role travels in the content's _meta (promptops/role)",
    )
    tools: Literal["off", "catalog", "per-prompt"] | None = Field(
        default=None,
        description="Offer this package's prompts as MCP tools too, for clients that only call "
        "tools: `catalog` (list_prompts and get_prompt), `per-prompt` (one tool per prompt, "
        "typed by its arguments) or `off`. Absent: as `promptops serve --tools` says",
    )


class TemplatesConfig(Strict):
    whitespace: WhitespaceMode = Field(
        default="standalone",
        description="`standalone`: a line holding only block tags ({% %}, {# #}) and blanks "
        "disappears, newline included; every other character is kept (Mustache's rule). "
        "`jinja`: Jinja's own defaults (no trim, no lstrip), as Prompty and Nunjucks render",
    )


class LimitsConfig(Strict):
    """Bounds of one prompts/get request (defaults and hard caps: promptops/sandbox/limits.py)."""

    renderTimeoutMs: int = Field(
        default=bounds.DEFAULT_TIMEOUT_MS, ge=1, le=bounds.MAX_TIMEOUT_MS,
        description="Wall-clock budget of one request: validation, matching, every template")
    maxOutputChars: int = Field(
        default=bounds.DEFAULT_OUTPUT_CHARS, ge=1, le=bounds.MAX_OUTPUT_CHARS,
        description="Characters of the whole reply, and of any one value a template builds")


CHANNEL_RE = r"^[a-z0-9](?:[a-z0-9._-]{0,62}[a-z0-9])?$"
DURATION_RE = r"^(?:[0-9]+[wdhms])+$"
Gate = Literal["lint", "test"]
ALL_GATES: tuple[Gate, ...] = ("lint", "test")


class ChannelPolicy(Strict):
    """One release channel and what a promotion into it requires (docs/channels.md)."""

    name: str = Field(pattern=CHANNEL_RE, description="Channel name, e.g. staging, production")
    after: str | None = Field(
        None, pattern=CHANNEL_RE,
        description="The channel a version must have been in before this one (default: the "
        "channel listed before; null for none)")
    soak: str | None = Field(
        None, pattern=DURATION_RE,
        description="How long the version must have been in `after`, e.g. 30m, 24h, 2d")
    gates: list[Gate] = Field(
        default_factory=lambda: list(ALL_GATES),
        description="Checks the release must pass (besides rebuilding to its recorded digest)")


class Manifest(Strict):
    """promptops.yaml: the package's identity."""

    name: str = Field(pattern=NAME_RE, description="Package name")
    version: str = Field(pattern=SEMVER_RE, description="SemVer 2.0.0 version")
    description: str | None = None
    """One line about the package, shown by `promptops ls` and kept in the bundle."""

    instructions: str | None = Field(None, description="Served as the MCP server instructions")
    lint: LintConfig = Field(default_factory=lambda: LintConfig(),
                             description="Which lint rules run, and their limits.")

    serve: ServeConfig = Field(default_factory=lambda: ServeConfig(),
                               description="Settings of `promptops serve`.")

    templates: TemplatesConfig = Field(default_factory=lambda: TemplatesConfig(),
                                       description="How templates are read")
    limits: LimitsConfig | None = Field(
        None, description="Request bounds, within the hard caps (docs in SECURITY.md)")
    channels: list[ChannelPolicy] | None = Field(
        None, description="Release channels in promotion order, and what entering each "
        "requires (`promptops promote`, docs/channels.md)")

    @model_validator(mode="after")
    def _channel_order(self) -> Manifest:
        """Each channel once, and `after` naming a channel listed before it."""
        seen: list[str] = []
        for channel in self.channels or []:
            if channel.name in seen:
                raise ValueError(f"channel {channel.name!r} is listed twice under `channels`")
            if channel.after is not None and channel.after not in seen:
                raise ValueError(f"channel {channel.name!r}: `after: {channel.after}` must name "
                                 f"a channel listed before it ({', '.join(seen) or 'none is'})")
            seen.append(channel.name)
        return self
