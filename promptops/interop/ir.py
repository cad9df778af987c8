"""What an imported prompt is, independent of where it came from and of promptops' package model.

Six ecosystems describe prompts six ways; the importers translate each into this one
intermediate representation and the exporters read only this, so n formats need 2n
translators, not n². It is deliberately plain (frozen dataclasses, JSON values, no pydantic):
the package model is being restructured (issue 13) and maps from here in one place.

Every template is **Jinja source** in the prompt's ``whitespace`` mode (see
:mod:`promptops.sandbox.whitespace`), rendered with ``StrictUndefined`` and no autoescape, with
each argument bound by name (its default applied when the caller gives none) and every argument
also in ``args`` (``args["reference-file"]`` for names that are not identifiers). That is all a
template may assume; anything an ecosystem does beyond it (HTML escaping, trimming, JavaScript
truthiness) is spelled out in the template by the importer, or recorded as a :class:`Loss`.

Values of JSON type (``Json``) are what the source wrote, parsed: ``None``, bool, int, float,
str, lists and str-keyed dicts of them. Treat them as read-only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from promptops.sandbox.whitespace import WhitespaceMode

Json: TypeAlias = Any
JsonObject: TypeAlias = dict[str, Json]  # a JSON object as parsed from a source file
Role = Literal["user", "assistant", "system"]
ROLES: tuple[Role, ...] = ("user", "assistant", "system")
ArgType = Literal["string", "number", "integer", "boolean", "array", "object"]
ARG_TYPES: tuple[ArgType, ...] = ("string", "number", "integer", "boolean", "array", "object")


class _Missing:
    """The default of an argument that has none (``None`` is a legitimate JSON default)."""

    _instance: _Missing | None = None

    def __new__(cls) -> _Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "NO_DEFAULT"

    def __bool__(self) -> bool:
        return False


NO_DEFAULT: object = _Missing()


@dataclass(frozen=True)
class Argument:
    """One input of the prompt.

    ``name`` is the source's own variable name, even when it is not an identifier
    (``reference-file``, ``input:x``); templates read those through ``args[...]``.
    ``schema`` holds the JSON Schema keywords that refine an array or object type
    (``items``, ``properties``, ``required``, ``additionalProperties``, ``enum``...), as written.
    An argument that is optional upstream has ``required=False`` and a ``default`` that renders
    exactly as the source renders a missing value (``""`` for a Handlebars/Nunjucks string).
    """

    name: str
    type: ArgType = "string"
    required: bool = True
    default: Json = NO_DEFAULT
    description: str | None = None
    schema: Mapping[str, Json] = field(default_factory=dict)

    @property
    def has_default(self) -> bool:
        return self.default is not NO_DEFAULT


@dataclass(frozen=True)
class Text:
    """A text part: a Jinja template."""

    template: str


@dataclass(frozen=True)
class Media:
    """A media part (Dotprompt's ``{{media url=...}}``): URL and content type are templates."""

    url: str
    content_type: str | None = None


@dataclass(frozen=True)
class PackageFile:
    """A package file a message embeds whole (a ``resource``, ``image`` or ``audio`` with
    ``file:``), as a built bundle holds it: only :func:`promptops.interop.package.from_bundle`
    makes these (importers never do), so an exporter can hand the file to a target that
    references files (a VS Code Markdown link, a Claude Code ``@path``) or name the loss.

    ``path`` is package-relative; ``uri`` the MCP URI it is served under (a template, as
    written), ``kind`` the message type.
    """

    path: str
    data: bytes
    kind: Literal["resource", "image", "audio"] = "resource"
    uri: str | None = None
    mime_type: str | None = None


Part: TypeAlias = Text | Media | PackageFile


# What Dotprompt calls blank: JavaScript's String.prototype.trim() removes these.
BLANK = frozenset(" \t\n\r\v\f\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
                  "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff")


@dataclass(frozen=True)
class Message:
    """A message with a fixed role; its content is the parts in order (usually one Text).

    ``drop_blank``: a text part that renders blank (only :data:`BLANK` characters) is left
    out, and a message left with no part is not sent - Dotprompt's rule (it splits the
    rendered text and drops blank pieces); every other ecosystem sends what it renders.
    """

    role: Role
    parts: tuple[Part, ...]
    drop_blank: bool = False

    @property
    def template(self) -> str | None:
        """The template of a message that is one text part, else None."""
        if len(self.parts) == 1 and isinstance(self.parts[0], Text):
            return self.parts[0].template
        return None


@dataclass(frozen=True)
class Splice:
    """The messages of an array argument, spliced in as they are (a chat history).

    Each item is ``{"role": ..., "content": ...}``; ``content`` is a string or a list of
    ``{"text": ...}`` parts (joined). Roles ``user``/``assistant``/``system`` are kept,
    ``human`` reads as user and ``ai``/``model`` as assistant. ``trim`` strips each
    content's surrounding whitespace (Prompty strips every message it parses).
    """

    argument: str
    trim: bool = False


@dataclass(frozen=True)
class Loop:
    """Messages repeated for each item of an array argument (promptfoo's ``_conversation``).

    For each item, ``messages`` render with ``item`` bound to it (and Jinja's ``loop``
    variables available as ``loop``).
    """

    argument: str
    item: str
    messages: tuple[Message, ...]


MessageItem: TypeAlias = Message | Splice | Loop


@dataclass(frozen=True)
class Model:
    """The model the source names (``id``) and its generation settings, as written."""

    id: str | None = None
    settings: Mapping[str, Json] = field(default_factory=dict)


@dataclass(frozen=True)
class Tool:
    """A tool the prompt declares: by name only, or with its full definition as written."""

    name: str
    definition: Mapping[str, Json] | None = None


@dataclass(frozen=True)
class Output:
    """The response the prompt asks for: a format (``json``, ``text``...) and/or a schema.

    ``schema`` is a JSON Schema, or a string naming a schema defined elsewhere (Genkit's
    ``schema: Analysis``), kept as the reference it is.
    """

    format: str | None = None
    schema: Json = None


@dataclass(frozen=True)
class Sample:
    """A named argument set that travels with the prompt (tests, ``render --sample``)."""

    name: str
    arguments: Mapping[str, Json]


@dataclass(frozen=True)
class Loss:
    """Something in the source the IR cannot express exactly, and why.

    ``line`` is the 1-based line of the source file where it is, when known.
    """

    what: str
    reason: str
    line: int | None = None

    def __str__(self) -> str:
        where = f"line {self.line}: " if self.line else ""
        return f"{where}{self.what}: {self.reason}"


@dataclass(frozen=True)
class IRPrompt:
    """One prompt as imported; ``losses`` empty means the translation is exact."""

    name: str
    source: str  # the file it came from, as given to the importer
    ecosystem: str
    messages: tuple[MessageItem, ...]
    arguments: tuple[Argument, ...] = ()
    whitespace: WhitespaceMode = "standalone"
    title: str | None = None
    description: str | None = None
    model: Model | None = None
    tools: tuple[Tool, ...] = ()
    output: Output | None = None
    samples: tuple[Sample, ...] = ()
    metadata: Mapping[str, Json] = field(default_factory=dict)
    losses: tuple[Loss, ...] = ()
    notes: tuple[str, ...] = ()
    # The package files its templates ``{% include %}`` (path -> Jinja source), from a built
    # bundle; importers write self-contained templates and leave it empty. An exporter to a
    # target without includes inlines them from here.
    includes: Mapping[str, str] = field(default_factory=dict)

    @property
    def exact(self) -> bool:
        return not self.losses

    def argument(self, name: str) -> Argument | None:
        return next((a for a in self.arguments if a.name == name), None)
