"""The bundle format's rules as data, for serve's cold path: :data:`FORMAT_TABLE`.

:mod:`~promptops.pipeline.bundle_types` states the format twice over, as TypedDicts (what
mypy checks every reader against) and as this table of what narrows each key (what
serving's load check, :mod:`~.bundle_shapes`, is compiled from). The table lives here,
apart from the TypedDicts, because serving checks every bundle it loads against it before
its first reply, and the TypedDicts cost that start ~8 M instructions to create (each
``NotRequired[...]``, ``Literal[...]`` and ``list[...]`` evaluated; ~2.5% of the floor's
whole start at 1,000 prompts) for nothing it runs. So the literals and the required keys
(in each TypedDict's order: the order the checker says what an object lacks) are written
here as tuples, and a test holds them to the TypedDicts' ``Literal`` arguments and
``__required_keys__`` (tests/pipeline/test_bundle_types.py): one statement each, checked.
Standard library only, and no ``typing``.
"""

from __future__ import annotations

from promptops.sandbox import limits as bounds

FORMAT = "promptops.bundle/1"
# Any name MCP can carry: its schema puts no rule on an argument name, so the only limits are
# ours (printable, bounded). Templates read names that are not identifiers as args["..."].
# The prompt file's model (pipeline/model.py) takes it from here: one statement.
ARG_NAME_RE = r"^[^\x00-\x1f\x7f]{1,128}$"
DIGEST_RE = r"^sha256:[0-9a-f]{64}$"

# The values of bundle_types' Literal aliases (Role, ServedRole, Kind, ArgType, the modes)
ROLES = ("user", "assistant", "system")  # as written; system is served as systemRole
SERVED_ROLES = ("user", "assistant")
KINDS = ("text", "image", "audio", "resource", "resource_link", "history")
ARG_TYPES = ("string", "number", "integer", "boolean", "array", "object")
WHITESPACE_MODES = ("standalone", "jinja")

# Object (a TypedDict's name) -> its required keys, in the TypedDict's order
REQUIRED: dict[str, tuple[str, ...]] = {
    "Bundle": ("format", "package", "prompts", "templates", "resources", "source", "digest"),
    "PackageInfo": ("name", "version", "cacheScope"), "Limits": (),
    "SourceInfo": ("commit", "tree", "dirty", "path"), "Resource": ("mimeType",),
    "Prompt": ("name", "arguments", "messages", "source"), "Icon": ("src",),
    "Argument": ("name",), "Message": ("type",), "Annotations": (), "ModelInfo": (),
    "ToolInfo": ("name",), "OutputInfo": (), "SampleInfo": ("name", "arguments"),
}


# ---- the table -------------------------------------------------------------------------------
class Field:
    """One key of one object of the format: its JSON kind and what narrows it.

    ``kind`` is a JSON type (``string``, ``boolean``, ``integer``, ``number``, ``array``,
    ``object``; ``json`` for any JSON value) or the name of a TypedDict of
    :mod:`~promptops.pipeline.bundle_types` (a nested object). ``of`` is the kind of an
    array's items or of an object's values (an object with ``of`` is a map, its keys free).
    ``values`` are the literals the value (an array: each item) must be one of; ``also``
    are values accepted besides the kind (``None`` for a nullable key, ``False`` for "a
    string or false"). ``pattern`` is a regular expression the whole string matches (RE2
    and Python agree on it); ``min_length`` bounds a string; ``ge``/``le`` bound a number.
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


_STR, _BOOL, _WHITESPACE = Field("string"), Field("boolean"), Field(
    "string", values=WHITESPACE_MODES)
_SERVED = SERVED_ROLES

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
        "type": Field("string", values=ARG_TYPES),
        "schema": Field("object", "json"),  # of supported keywords (the checker's rule)
        "default": Field("json"),  # of the argument's type (the checker's rule)
        "required": _BOOL,
        "enum": Field("array", "string"), "examples": Field("array", "string"),
        "maxLength": Field("integer", ge=1),
    },
    "Message": {
        "role": Field("string", values=ROLES),
        "type": Field("string", values=KINDS),
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
