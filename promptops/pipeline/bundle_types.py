"""The bundle format, stated once: the TypedDicts and the table of what narrows each key.

A bundle is plain JSON (see :mod:`promptops.pipeline.bundle`); these TypedDicts give it
names, so the renderer, the test runner, the diff engine and serve read
``bundle["prompts"][0]["arguments"]`` with mypy checking every key instead of a test
noticing a renamed one. :data:`FORMAT_TABLE`, beside them, says for every key of every
object its JSON kind and what narrows it: the literals, the pattern, the bounds. It is
the one statement of the format's rules (``FORMAT`` is taken: it is the format's name):

- the standard-library check serving runs at load (:mod:`~.bundle_check`) is driven by
  it, both its yes/no pass and its worded one;
- a test holds the TypedDicts to it (keys, required keys and types), and another the
  pydantic model behind ``promptops verify`` and ``promptops schema bundle``
  (:mod:`~.bundle_schema`) field by field: a literal, pattern or bound changed in one
  place and not the other fails (tests/pipeline/test_bundle_types.py).

What the table cannot say (a message's fields by its ``type``, references into
``templates`` and ``resources``, unique names, an argument's default fitting its type)
are the checker's rules, written once there.

This module does without ``from __future__ import annotations``: a TypedDict's
``NotRequired`` keys are known at run time only when its annotations are evaluated, and
the tests read ``__required_keys__`` and ``__optional_keys__``. The table itself, with the
literals and required keys it states as tuples, is :mod:`~.bundle_format`'s (re-exported
here): serve's cold path reads the table, never these TypedDicts (creating them is ~8 M
instructions of a start), and imports this module only for the type checker.
"""

from typing import Any, Literal, NotRequired, TypedDict

# The table and the format's constants, here for every reader that imports them from this
# module (serve's cold path imports bundle_format itself: see its docstring)
from promptops.pipeline.bundle_format import ARG_NAME_RE as ARG_NAME_RE
from promptops.pipeline.bundle_format import DIGEST_RE as DIGEST_RE
from promptops.pipeline.bundle_format import FORMAT as FORMAT
from promptops.pipeline.bundle_format import FORMAT_TABLE as FORMAT_TABLE
from promptops.pipeline.bundle_format import Field as Field

Role = Literal["user", "assistant", "system"]  # as written; system is served as systemRole
ServedRole = Literal["user", "assistant"]
Kind = Literal["text", "image", "audio", "resource", "resource_link", "history"]
ArgType = Literal["string", "number", "integer", "boolean", "array", "object"]


class Icon(TypedDict):
    src: str
    mimeType: NotRequired[str]
    sizes: NotRequired[list[str]]
    theme: NotRequired[Literal["light", "dark"]]


class Annotations(TypedDict, total=False):
    audience: list[ServedRole]
    priority: float
    lastModified: str


class Argument(TypedDict):
    """A declared argument; ``required`` and ``maxLength`` are always written by the build
    but optional to a reader (absent: not required, ``defaults.MAX_LENGTH``)."""

    name: str
    title: NotRequired[str]
    description: NotRequired[str]
    type: NotRequired[ArgType]  # absent: string
    schema: NotRequired[dict[str, object]]  # JSON Schema keywords (pipeline/argtypes.py)
    required: NotRequired[bool]
    default: NotRequired[Any]  # of the argument's type
    enum: NotRequired[list[str]]
    examples: NotRequired[list[str]]
    pattern: NotRequired[str]
    maxLength: NotRequired[int]


class Message(TypedDict):
    """One message as the package declares it: the templates (``text``, ``uri``), files
    (``template`` into ``templates``, ``file`` into ``resources``) and fixed fields.
    A ``history`` item has no role: it names the array argument (``argument``) whose
    messages are spliced in."""

    role: NotRequired[Role]  # every message but a history item has one
    type: Kind
    argument: NotRequired[str]
    strip: NotRequired[bool]
    omitIfBlank: NotRequired[bool]
    loopItem: NotRequired[str]  # `for: ITEM in ARG`: repeated per item of ARG (loopOver)
    loopOver: NotRequired[str]
    continues: NotRequired[bool]  # a further part of the message before it
    text: NotRequired[str]
    template: NotRequired[str]
    file: NotRequired[str]
    uri: NotRequired[str]
    mimeType: NotRequired[str]
    name: NotRequired[str]
    title: NotRequired[str]
    description: NotRequired[str]
    size: NotRequired[int]
    annotations: NotRequired[Annotations]


class ModelInfo(TypedDict, total=False):
    id: str
    settings: dict[str, object]


class ToolInfo(TypedDict):
    name: str
    description: NotRequired[str]
    definition: NotRequired[dict[str, object]]


class OutputInfo(TypedDict, total=False):
    format: str
    schema: object  # a JSON Schema, or the name of one defined elsewhere


class SampleInfo(TypedDict):
    name: str
    arguments: dict[str, object]


class Prompt(TypedDict):
    name: str
    title: NotRequired[str]
    description: NotRequired[str]
    resultDescription: NotRequired[str | Literal[False]]
    icons: NotRequired[list[Icon]]
    arguments: list[Argument]
    messages: list[Message]
    source: str  # the prompt file, relative to the package
    # Carried exactly as written and served under _meta; never acted on.
    model: NotRequired[ModelInfo]
    tools: NotRequired[list[ToolInfo]]
    output: NotRequired[OutputInfo]
    samples: NotRequired[list[SampleInfo]]
    metadata: NotRequired[dict[str, object]]
    whitespace: NotRequired[Literal["standalone", "jinja"]]  # absent: the package's


class Resource(TypedDict):
    """A file a message embeds: text, or base64 ``blob`` for anything else."""

    mimeType: str
    text: NotRequired[str]
    blob: NotRequired[str]


class Limits(TypedDict, total=False):
    renderTimeoutMs: int
    maxOutputChars: int


class PackageInfo(TypedDict):
    name: str
    version: str
    description: NotRequired[str]
    instructions: NotRequired[str]
    cacheScope: Literal["public", "private"]
    limits: NotRequired[Limits]  # only bounds that differ from the defaults
    systemRole: NotRequired[ServedRole]  # absent: user
    tools: NotRequired[Literal["off", "catalog", "per-prompt"]]  # absent: as `serve --tools`
    whitespace: NotRequired[Literal["standalone", "jinja"]]  # absent: a bundle built before
    # the modes existed, rendered with trim_blocks + lstrip_blocks as it was built


class SourceInfo(TypedDict):
    """Where the bundle was built from: reproducible, so no absolute paths."""

    commit: str | None
    tree: str | None
    dirty: bool
    path: str  # the package folder relative to the repository root


class Bundle(TypedDict):
    format: str
    package: PackageInfo
    prompts: list[Prompt]
    templates: dict[str, str]  # every template file a prompt reaches, by path
    resources: dict[str, Resource]
    source: SourceInfo
    digest: str  # sha256 over the canonical JSON of every other key


def keys(kind: type) -> frozenset[str]:
    """Every key a TypedDict of this module declares, required or not."""
    return frozenset(kind.__required_keys__ | kind.__optional_keys__)  # type: ignore[attr-defined]
