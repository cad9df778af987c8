"""The bundle format, stated once: the TypedDicts and the table of what narrows each key.

A bundle is plain JSON (see :mod:`promptops.pipeline.bundle`); these TypedDicts give it
names, so the renderer, the test runner, the diff engine and serve read
``bundle["prompts"][0]["arguments"]`` with mypy checking every key instead of a test
noticing a renamed one. :data:`FORMAT_TABLE`, next to them, says for every key of every
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
the tests read ``__required_keys__`` and ``__optional_keys__``. It imports nothing heavy:
serve reads it on its cold path.
"""

from typing import Any, Literal, NotRequired, TypedDict

from promptops.sandbox import limits as bounds

FORMAT = "promptops.bundle/1"
# Any name MCP can carry: its schema puts no rule on an argument name, so the only limits are
# ours (printable, bounded). Templates read names that are not identifiers as args["..."].
# The prompt file's model (pipeline/model.py) takes it from here: one statement.
ARG_NAME_RE = r"^[^\x00-\x1f\x7f]{1,128}$"

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


# ---- the table -------------------------------------------------------------------------------
class Field:
    """One key of one object of the format: its JSON kind and what narrows it.

    ``kind`` is a JSON type (``string``, ``boolean``, ``integer``, ``number``, ``array``,
    ``object``; ``json`` for any JSON value) or the name of a TypedDict of this module (a
    nested object). ``of`` is the kind of an array's items or of an object's values (an
    object with ``of`` is a map, its keys free). ``values`` are the literals the value
    (an array: each item) must be one of; ``also`` are values accepted besides the kind
    (``None`` for a nullable key, ``False`` for "a string or false"). ``pattern`` is a
    regular expression the whole string matches (RE2 and Python agree on it);
    ``min_length`` bounds a string; ``ge``/``le`` bound a number.
    """

    __slots__ = ("also", "ge", "kind", "le", "min_length", "of", "pattern", "values")

    def __init__(self, kind: str, of: str | None = None, *, values: tuple[object, ...] = (),
                 also: tuple[object, ...] = (), pattern: str | None = None,
                 min_length: int | None = None, ge: float | None = None,
                 le: float | None = None) -> None:
        self.kind, self.of, self.values, self.also = kind, of, values, also
        self.pattern, self.min_length, self.ge, self.le = pattern, min_length, ge, le

    def __repr__(self) -> str:
        given = {k: getattr(self, k) for k in self.__slots__ if getattr(self, k) not in (None, ())}
        return "Field(" + ", ".join(f"{k}={v!r}" for k, v in given.items()) + ")"


def _literals(kind: object) -> tuple[object, ...]:
    """The values of a ``Literal[...]`` alias of this module: stated once, in the types."""
    return tuple(kind.__args__)  # type: ignore[attr-defined]


_STR, _BOOL, _WHITESPACE = Field("string"), Field("boolean"), Field(
    "string", values=_literals(Literal["standalone", "jinja"]))
_SERVED = _literals(ServedRole)
DIGEST_RE = r"^sha256:[0-9a-f]{64}$"

# Object (a TypedDict's name) -> key -> Field. Keys in the order the checker words them.
FORMAT_TABLE: dict[str, dict[str, Field]] = {
    "Bundle": {
        "format": Field("string", values=(FORMAT,)),
        "package": Field("PackageInfo"), "source": Field("SourceInfo"),
        "templates": Field("object", "string"), "resources": Field("object", "Resource"),
        "prompts": Field("array", "Prompt"), "digest": Field("string", pattern=DIGEST_RE),
    },
    "PackageInfo": {
        "name": _STR, "version": _STR, "description": _STR, "instructions": _STR,
        "cacheScope": Field("string", values=("public", "private")),
        "limits": Field("Limits"),
        "systemRole": Field("string", values=_SERVED),
        "whitespace": _WHITESPACE,
        "tools": Field("string", values=("off", "catalog", "per-prompt")),
    },
    "Limits": {
        "renderTimeoutMs": Field("integer", ge=1, le=bounds.MAX_TIMEOUT_MS),
        "maxOutputChars": Field("integer", ge=1, le=bounds.MAX_OUTPUT_CHARS),
    },
    "SourceInfo": {
        "commit": Field("string", also=(None,)), "tree": Field("string", also=(None,)),
        "dirty": _BOOL, "path": _STR,
    },
    "Resource": {"mimeType": _STR, "text": _STR, "blob": _STR},
    "Prompt": {
        "name": _STR, "title": _STR, "description": _STR, "source": _STR,
        "resultDescription": Field("string", also=(False,)),
        "icons": Field("array", "Icon"),
        "arguments": Field("array", "Argument"), "messages": Field("array", "Message"),
        "whitespace": _WHITESPACE,
        "model": Field("ModelInfo"), "tools": Field("array", "ToolInfo"),
        "output": Field("OutputInfo"), "samples": Field("array", "SampleInfo"),
        "metadata": Field("object", "json"),
    },
    "Icon": {
        "src": _STR, "mimeType": _STR, "sizes": Field("array", "string"),
        "theme": Field("string", values=("light", "dark")),
    },
    "Argument": {
        "name": Field("string", pattern=ARG_NAME_RE), "title": _STR, "description": _STR,
        "pattern": _STR,  # and it compiles for RE2 (the checker's rule)
        "type": Field("string", values=_literals(ArgType)),
        "schema": Field("object", "json"),  # of supported keywords (the checker's rule)
        "default": Field("json"),  # of the argument's type (the checker's rule)
        "required": _BOOL,
        "enum": Field("array", "string"), "examples": Field("array", "string"),
        "maxLength": Field("integer", ge=1),
    },
    "Message": {
        "role": Field("string", values=_literals(Role)),
        "type": Field("string", values=_literals(Kind)),
        "strip": _BOOL, "omitIfBlank": _BOOL, "continues": _BOOL,
        "text": _STR, "template": _STR, "file": _STR, "uri": _STR, "mimeType": _STR,
        "name": _STR, "title": _STR, "description": _STR, "argument": _STR,
        "loopItem": _STR, "loopOver": _STR,
        "size": Field("integer"),
        "annotations": Field("Annotations"),
    },
    "Annotations": {
        "audience": Field("array", "string", values=_SERVED),
        "priority": Field("number", ge=0, le=1),
        "lastModified": _STR,
    },
    "ModelInfo": {"id": _STR, "settings": Field("object", "json")},
    "ToolInfo": {"name": Field("string", min_length=1), "description": _STR,
                 "definition": Field("object", "json")},
    "OutputInfo": {"format": _STR, "schema": Field("json")},
    "SampleInfo": {"name": Field("string", min_length=1), "arguments": Field("object", "json")},
}
