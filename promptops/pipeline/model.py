"""A prompt file as pydantic models: the contract users write, prompt by prompt.

Frozen and ``extra="forbid"`` so a typo in a key is an error rather than silently
ignored, and strict so ``required: "yes"`` is not quietly read as true. The JSON
Schemas that editors use (``promptops schema``) are generated from these classes. The
manifest's models (promptops.yaml) are in :mod:`promptops.pipeline.manifest`; the parts a
bundle carries as they are (:class:`Argument`, :class:`Icon`, :class:`Annotations`...) are
its schema too (:mod:`~.bundle_schema`), held to the bundle's table by a test.
"""

from __future__ import annotations

import ast
import inspect
import sys
from collections.abc import Mapping
from functools import cache
from typing import Annotated, Literal, Unpack

from pydantic import BaseModel, ConfigDict, Field, JsonValue, field_validator, model_validator
from pydantic.fields import FieldInfo

from promptops.pipeline import argtypes, defaults
from promptops.pipeline.bundle_types import ARG_NAME_RE

PROMPT_NAME_RE = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$"
IDENTIFIER_RE = r"^[A-Za-z_][A-Za-z0-9_]*$"
# `for: ITEM in ARGUMENT`: the item is an identifier, the argument any argument name
FOR_RE = r"^\s*[A-Za-z_][A-Za-z0-9_]*\s+in\s+\S.*$"
ArgType = Literal["string", "number", "integer", "boolean", "array", "object"]
Role = Literal["user", "assistant", "system"]
WhitespaceMode = Literal["standalone", "jinja"]


@cache
def _field_docs(module: str) -> dict[str, dict[str, str]]:
    """The string under each annotated field of each class of ``module``'s source, by class
    name: pydantic's ``use_attribute_docstrings`` reading, from one parse of the module.

    pydantic finds each class's source by walking the stack and tokenizing the class block
    (before Python 3.13), about a sixth of importing the models: every command that reads a
    package paid it, where this parses each models module once."""
    try:
        source = inspect.getsource(sys.modules[module])
    except (OSError, TypeError):  # no source (as pydantic: no descriptions)
        return {}
    out: dict[str, dict[str, str]] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef):
            docs = out[node.name] = {}
            target: str | None = None
            for stmt in node.body:
                if (target and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
                        and isinstance(stmt.value.value, str)):
                    docs[target] = inspect.cleandoc(stmt.value.value)
                target = (stmt.target.id if isinstance(stmt, ast.AnnAssign)
                          and isinstance(stmt.target, ast.Name) else None)
    return out


class Strict(BaseModel):
    # A string under a field is its description: the hover text editors show
    # (promptops schema, pipeline/editor_schema.py).
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    def __init_subclass__(cls, **kwargs: Unpack[ConfigDict]) -> None:
        """Each field's docstring made its description before pydantic collects the fields
        (what ``use_attribute_docstrings`` does, without its per-class source search)."""
        super().__init_subclass__(**kwargs)
        own = inspect.get_annotations(cls)
        for name, doc in _field_docs(cls.__module__).get(cls.__name__, {}).items():
            if name.startswith("_") or str(own.get(name, "")).startswith("ClassVar"):
                continue  # not a field: pydantic gives it no description either
            value = cls.__dict__.get(name, FieldInfo)
            if value is FieldInfo:
                setattr(cls, name, Field(description=doc))
            elif isinstance(value, FieldInfo):  # pydantic rebuilds it from its given arguments
                raise TypeError(f"{cls.__name__}.{name}: a field made with Field() says its "
                                "description there (description=), not in a string under it")
            else:
                setattr(cls, name, Field(value, description=doc))

    def __reduce__(self) -> tuple[object, ...]:
        """Pickled as its class and its four slots, rebuilt by :func:`_unpickled`.

        A forked child's memo comes back pickled (the review's prevalidation, the build's
        and lint's halves: 16,000 models for 2,500 of `real`'s prompt files); pydantic's
        own pickling builds a state dict per model and sets it back through a Python
        ``__setstate__``: 25-35% more time in ``dumps`` and ``loads`` for the same model,
        field for field (``tests/pipeline/test_model_pickle.py``)."""
        return _unpickled, (type(self), self.__dict__, self.__pydantic_fields_set__,
                            self.__pydantic_extra__, self.__pydantic_private__)


_set = object.__setattr__  # a frozen model refuses its own __setattr__


def _unpickled(cls: type[Strict], fields: dict[str, object], fields_set: set[str],
               extra: dict[str, object] | None, private: dict[str, object] | None) -> Strict:
    """A model :meth:`Strict.__reduce__` pickled, its slots set as pydantic's
    ``__setstate__`` sets them (nothing validated again: the fields were valid)."""
    model = cls.__new__(cls)
    _set(model, "__dict__", fields)
    _set(model, "__pydantic_fields_set__", fields_set)
    _set(model, "__pydantic_extra__", extra)
    _set(model, "__pydantic_private__", private)
    return model


class Icon(Strict):
    """An icon clients may show beside the prompt (MCP `Icon`)."""

    src: str
    """The icon's URL (https: or data:)."""

    mimeType: str | None = None
    """The image type, such as `image/png`, when the URL does not say."""

    sizes: list[str] | None = None
    """Sizes the image suits, such as `48x48` or `any`."""

    theme: Literal["light", "dark"] | None = None
    """The background the icon is drawn for: `light` or `dark`."""



class Argument(Strict):
    """One argument of the prompt: what callers pass, and how it is checked."""

    name: str = Field(pattern=ARG_NAME_RE, description="Any name; a template reads one that is "
                      "not an identifier as args[\"name\"] (every argument is also in args)")
    title: str | None = None
    """The human name clients show for the argument."""

    description: str | None = None
    """What the caller should pass; clients show it beside the field."""

    type: ArgType = Field(
        "string", description="The MCP wire carries strings: a typed value is parsed (JSON for "
        "array/object; numbers; true/false) and checked before rendering")
    schema_: dict[str, JsonValue] | None = Field(
        None, alias="schema", description="JSON Schema keywords refining the type (above all for "
        "array and object): items, properties, required, additionalProperties, enum, "
        "minItems, maxItems, minLength, maxLength, minimum, maximum")
    required: bool = False
    """`true`: a `prompts/get` without it fails with -32602; else `default` is used."""

    default: JsonValue = Field(None, description="Value of an absent optional argument "
                               "(of the argument's type)")
    enum: list[str] | None = Field(None, description="Allowed values; the completion source")
    pattern: str | None = Field(
        None, description="An RE2 regular expression the whole value must match")
    maxLength: int = Field(defaults.MAX_LENGTH, ge=1, description="Longest value accepted, in "
                           "characters; longer values are refused with -32602.")

    # Fields in reading order: lint's key order (PO108) is this order.
    examples: list[str] | None = Field(None, description="Completion values, not enforced")

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, populate_by_name=True)

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

    @model_validator(mode="after")
    def _typed(self) -> Argument:
        if self.schema_ is not None:
            bad = argtypes.unknown_keywords(self.schema_)
            if bad:
                raise ValueError(f"schema keyword {bad[0]!r} is not supported (supported: "
                                 f"{', '.join(sorted(argtypes.KEYWORDS))})")
        if self.type != "string" and (self.pattern is not None or self.enum is not None):
            raise ValueError("`pattern` and `enum` apply to string arguments")
        if self.default is not None:
            problem = argtypes.check(self.as_spec(), self.default)
            if problem:
                raise ValueError(f"default: {problem}")
        return self

    def as_spec(self) -> dict[str, object]:
        """The type part as the bundle holds it (what argtypes checks)."""
        spec: dict[str, object] = {"name": self.name, "type": self.type}
        if self.schema_ is not None:
            spec["schema"] = self.schema_
        return spec


class Annotations(Strict):
    """Hints for the client about one message's content."""

    audience: list[Literal["user", "assistant"]] | None = None
    """Who the content is for: `user`, `assistant` or both."""

    priority: Annotated[float, Field(ge=0, le=1)] | None = None
    """How important the content is, from 0 (least) to 1 (most)."""

    lastModified: str | None = None
    """When the content last changed, as an ISO 8601 timestamp."""

    @field_validator("priority", mode="before")
    @classmethod
    def _int_ok(cls, value: object) -> object:
        return float(value) if isinstance(value, int) and not isinstance(value, bool) else value


class ResourceBody(Strict):
    """An embedded resource: a URI and exactly one of `text` or `file`."""

    uri: str = Field(description="A template")
    mimeType: str | None = None
    """The resource's media type; default: from the file's extension, else `text/plain`."""

    text: str | None = Field(None, description="A template")
    file: str | None = Field(None, description="Package file: text for text/* and JSON, else blob")

    @model_validator(mode="after")
    def _one_body(self) -> ResourceBody:
        if (self.text is None) == (self.file is None):
            raise ValueError("a resource needs exactly one of `text` or `file`")
        return self


class MediaFile(Strict):
    """A package file embedded as image or audio content."""

    file: str
    """The package file to embed (base64 in the result), such as `resources/logo.png`."""

    mimeType: str | None = None
    """The media type; default: from the file's extension."""



class ResourceLinkBody(Strict):
    """A link to a resource the client can read (MCP `resource_link`)."""

    uri: str = Field(description="A template")
    name: str
    """The linked resource's name."""

    title: str | None = None
    """The human name clients show for the link."""

    description: str | None = None
    """What the linked resource holds."""

    mimeType: str | None = None
    """The linked resource's media type."""

    size: int | None = Field(None, ge=0)


CONTENT_KEYS = ("text", "template", "resource", "image", "audio", "resource_link", "history")


class Message(Strict):
    """One message of the prompt: a role and exactly one content key."""

    role: Role | None = Field(None, description="user, assistant or system (served as "
                              "serve.systemRole); not given for a `history` item")
    text: str | None = Field(None, description="An inline Jinja2 template")
    template: str | None = Field(None, description="A Jinja2 template file, package-relative")
    resource: ResourceBody | None = None
    """An embedded resource: a `uri` and its `text` or `file`."""

    image: MediaFile | None = None
    """An image file of the package, sent as image content."""

    audio: MediaFile | None = None
    """An audio file of the package, sent as audio content."""

    resource_link: ResourceLinkBody | None = None
    """A link to a resource the client can read."""

    history: str | None = Field(
        None, description="An argument of type array whose items are messages "
        "({role, content}), spliced in here as messages (a chat history)")
    strip: bool = Field(False, description="history: strip each spliced message's text")
    omitIfBlank: bool = Field(
        False, description="A text message that renders blank (whitespace only) is not sent")
    annotations: Annotations | None = None
    """Hints for the client: audience, priority, last modified."""

    for_: str | None = Field(
        None, alias="for", pattern=FOR_RE,
        description="`ITEM in ARGUMENT`: this message is repeated for each item of the array "
        "argument, with ITEM bound to the item (and `loop.index`, `loop.first`... as in a "
        "Jinja loop). Consecutive messages with the same `for` repeat together, as one group "
        "per item (a user/assistant pair per turn).")
    continues: bool = Field(
        False, description="This content continues the message before it (same role): a "
        "message of several parts. MCP carries one content block per message, so each part "
        "is served as a message of its own; exporters join them again.")

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, populate_by_name=True)

    @model_validator(mode="after")
    def _one_content(self) -> Message:
        given = [k for k in CONTENT_KEYS if getattr(self, k) is not None]
        if len(given) != 1:
            found = ", ".join(given) if given else "none"
            raise ValueError(
                f"a message needs exactly one content key of {', '.join(CONTENT_KEYS)} "
                f"(found: {found})"
            )
        if self.history is None:
            if self.role is None:
                raise ValueError("a message needs a `role` (user, assistant or system)")
            if self.strip:
                raise ValueError("`strip` applies to a `history` item")
        elif self.role is not None or self.annotations is not None or self.omitIfBlank:
            raise ValueError("a `history` item takes its roles from the argument's messages; "
                             "it has only `history` and `strip`")
        if self.omitIfBlank and self.kind not in ("text", "template"):
            raise ValueError("`omitIfBlank` applies to text messages")
        if self.history is not None and (self.for_ is not None or self.continues):
            raise ValueError("a `history` item is spliced in as it is: it takes no `for` or "
                             "`continues`")
        return self

    @property
    def kind(self) -> str:
        return next(k for k in CONTENT_KEYS if getattr(self, k) is not None)

    @property
    def loop(self) -> tuple[str, str] | None:
        """(item name, array argument) of a ``for`` message, else None."""
        if self.for_ is None:
            return None
        item, _, over = self.for_.strip().partition(" in ")
        return item.strip(), over.strip()


class Model(Strict):
    """The model the prompt was written for; carried, never acted on."""

    id: str | None = Field(None, description="Model id, as the source names it")
    settings: dict[str, JsonValue] = Field(
        default_factory=dict, description="Generation settings (temperature, max tokens...)")


class Tool(Strict):
    name: str = Field(min_length=1)
    description: str | None = None
    definition: dict[str, JsonValue] | None = Field(
        None, description="The tool's full definition as written (e.g. an input schema)")


class Output(Strict):
    format: str | None = Field(None, description="e.g. json, text")
    schema_: JsonValue = Field(None, alias="schema",
                               description="A JSON Schema, or the name of one defined elsewhere")
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, populate_by_name=True)


class Sample(Strict):
    name: str = Field(min_length=1)
    arguments: dict[str, JsonValue] = Field(default_factory=dict)


class ErrorExpectation(Strict):
    """The JSON-RPC error a request must fail with (what a client would receive)."""

    code: int | None = Field(None, description="JSON-RPC code: -32602 bad input, -32603 failure")
    message: str | None = Field(None, description="The exact error message")
    message_contains: str | None = Field(None, description="A substring of the error message")

    @model_validator(mode="after")
    def _something(self) -> ErrorExpectation:
        if self.code is None and self.message is None and self.message_contains is None:
            raise ValueError("error needs at least one of code, message, message_contains")
        return self


class Smoke(Strict):
    """The prompt's automatic smoke case, when it cannot pass as generated (docs/testing.md)."""

    skip: str | None = Field(
        None, min_length=1, description="Why the generated arguments cannot be valid: the "
        "smoke case is reported skipped with this reason while it fails on its arguments "
        "(-32602), and fails when it renders or fails any other way")
    error: ErrorExpectation | None = Field(
        None, description="The error the smoke case must fail with (then it passes)")

    @model_validator(mode="after")
    def _one(self) -> Smoke:
        if (self.skip is None) == (self.error is None):
            raise ValueError("smoke needs exactly one of `skip` (a reason) or `error`")
        return self


class PromptFile(Strict):
    # Fields in reading order: lint's key order (PO108) is this order.
    """prompts/**/*.prompt.yaml: one MCP prompt."""

    name: str | None = Field(None, pattern=PROMPT_NAME_RE, description="Default: file name")
    title: str | None = None
    """The human name clients show in their prompt picker."""

    description: str | None = None
    """What the prompt does; clients show it in their prompt picker."""

    resultDescription: str | Literal[False] | None = Field(
        default=None,
        description="The prompts/get result's description: a template rendered with the "
        "arguments, or false to send none; absent: the prompt's description",
    )
    icons: list[Icon] | None = None
    """Icons clients may show beside the prompt."""

    whitespace: WhitespaceMode | None = Field(
        None, description="This prompt's whitespace mode, over the package's "
        "templates.whitespace (a package imported from several tools mixes them)")
    arguments: list[Argument] = Field(
        default_factory=list,
        description="The arguments callers pass; each is a template variable.")

    model: Model | None = Field(None, description="Carried in the bundle and served in _meta "
                                "(promptops/model); never acted on")
    tools: list[Tool] | None = Field(None, description="Tool declarations, carried and served "
                                     "in _meta (promptops/tools)")
    output: Output | None = Field(None, description="The response asked for, carried and "
                                  "served in _meta (promptops/output)")
    samples: list[Sample] | None = Field(None, description="Named argument sets: `render "
                                         "--sample NAME`, and `sample:` in test cases")
    smoke: Smoke | None = Field(None, description="When the automatic smoke case cannot pass: "
                                "`skip: <why>` or the `error` it fails with")
    metadata: dict[str, JsonValue] | None = Field(
        None, description="Free metadata, carried and served in _meta (promptops/metadata)")
    messages: list[Message] = Field(min_length=1, description="The messages `prompts/get` returns, "
                                    "in order; each has a role and one content key.")

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True,
                              protected_namespaces=())

    @field_validator("smoke", mode="before")
    @classmethod
    def _smoke_reason(cls, value: object) -> object:
        if value is False:
            raise ValueError("`smoke: false` needs a reason: write `smoke: {skip: <why the "
                             "smoke case cannot pass>}` (or `smoke: {error: ...}`)")
        return value

    @model_validator(mode="after")
    def _unique_arguments(self) -> PromptFile:
        seen: set[str] = set()
        for arg in self.arguments:
            if arg.name in seen:
                raise ValueError(f"argument {arg.name!r} is declared twice")
            seen.add(arg.name)
        types = {a.name: a.type for a in self.arguments}
        for msg in self.messages:
            if msg.history is not None and types.get(msg.history) != "array":
                raise ValueError(f"history {msg.history!r} must name an argument of type array")
        _check_loops_and_parts(self.messages, types)
        names = [s.name for s in self.samples or ()]
        if len(set(names)) != len(names):
            raise ValueError("sample names must be unique")
        for sample in self.samples or ():
            unknown = sorted(set(sample.arguments) - set(seen))
            if unknown:
                raise ValueError(f"sample {sample.name!r}: unknown argument {unknown[0]!r}")
        return self


def _check_loops_and_parts(messages: list[Message], types: Mapping[str, str]) -> None:
    """``for`` names an array argument and an item that shadows nothing; a ``continues``
    part follows a message of its role (in the same ``for`` group)."""
    for i, msg in enumerate(messages):
        loop = msg.loop
        if loop is not None:
            item, over = loop
            if types.get(over) != "array":
                raise ValueError(f"for {msg.for_!r}: {over!r} must name an argument of type "
                                 "array")
            if item in types or item in ("args", "loop"):
                raise ValueError(f"for {msg.for_!r}: the item name {item!r} would hide "
                                 + ("the argument of that name" if item in types
                                    else f"`{item}`"))
        if msg.continues:
            before = messages[i - 1] if i else None
            if before is None or before.history is not None or before.role != msg.role \
                    or before.loop != loop:
                raise ValueError(f"message {i + 1} `continues` the message before it, which "
                                 "must exist and have the same role (and `for`)")
