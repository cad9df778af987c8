"""The whole shape of a bundle, checked with the standard library on serve's cold path.

``promptops serve --bundle`` must refuse at load every bundle that ``promptops verify``
refuses, or a request would meet the problem later as a KeyError (-32603). Verify's
schema is the pydantic model in :mod:`promptops.pipeline.bundle_schema`, which serving must
not import (pydantic costs ~100 ms at start). Both are held to one statement of the
format, :data:`~promptops.pipeline.bundle_types.FORMAT_TABLE` (every key, kind, literal,
pattern and bound, ``extra`` keys refused), which :mod:`~.bundle_shapes` compiles at import
into a :class:`~.bundle_shapes.Shape` per object: this module checks with those.

What the table cannot say are this module's rules, each written once and used by both
passes below: each message has the fields its ``type`` needs, every ``template`` and
``file`` it names exists in the bundle, a resource has exactly one of ``text``/``blob``,
prompt and argument names are unique, an argument's default fits its type, its schema
has only supported keywords and its pattern compiles. Optional fields are absent rather
than ``null`` (the build never writes ``null`` there, and serving would pass it on to
clients whose schema has no null): the table lists ``None`` only where the format has it.

It runs on every start, so it comes in two passes: :func:`valid`, a fast yes/no (per plain
key a dict lookup and an identity test, per narrowed one a C-level test; about 8 µs per
prompt of two arguments and two messages, where ``parse_bundle`` as a whole takes ~18 µs),
and only when that says no, :class:`_Check`, which words the first few problems with their
location, in the order they were always worded. A test holds the two to the same answer on
thousands of mutated bundles, and their words to a golden file
(tests/serve/test_bundle_load.py).
"""

from __future__ import annotations

import contextlib
from typing import Any

from promptops.pipeline import argtypes
from promptops.pipeline.bundle_shapes import (
    ANNOTATIONS,
    ARGUMENT,
    BUNDLE,
    CARRIED,
    ICON,
    MESSAGE,
    PACKAGE,
    PROMPT,
    RESOURCE,
    SOURCE,
    Shape,
    fits,
    words_of,
)
from promptops.sandbox.patterns import compile_pattern

MAX_REPORTED = 5
NEEDS = {  # what serving reads from a message of each type, besides role and type
    "text": (), "image": ("file", "mimeType"), "audio": ("file", "mimeType"),
    "resource": ("uri", "mimeType"), "resource_link": ("uri", "name"), "history": ("argument",),
}


class _Found(Exception):
    """Enough problems to refuse the bundle: stop looking."""


# ---- the rules the table cannot state: each returns (key or "", words) problems ------------
Problems = list[tuple[str, str]]
_OK: Problems = []  # never appended to: what a rule returns when all is well
_ROLES = frozenset(MESSAGE.fields["role"].values)


def _resource_rules(res: dict[str, object]) -> Problems:
    if ("text" in res) == ("blob" in res):
        return [("", "needs exactly one of 'text' and 'blob'")]
    return _OK


def _message_rules(m: dict[str, object], templates: dict[str, object],
                   resources: dict[str, object]) -> tuple[Problems, Problems]:
    """(its role and loop, its type's fields and references) of a message: two lists, as
    the worded pass says the first before the message's keys and the second after them.
    A history item has no role, every other message a valid one; ``loopItem`` comes with
    ``loopOver``; a message has the fields its ``type`` needs, and the files it names are
    in the bundle (the second list only for a valid ``type``)."""
    head = _OK
    kind = m.get("type")
    if kind == "history":
        if "role" in m:
            head = [("role", "is given on a history item")]
    elif type(m.get("role")) is not str or m["role"] not in _ROLES:
        head = [("role", MESSAGE.words["role"])]
    if ("loopItem" in m) != ("loopOver" in m):
        head = [*head, ("", "needs both or neither of 'loopItem' and 'loopOver'")]
    if type(kind) is not str or kind not in NEEDS:
        return head, _OK
    found = _OK
    for key in NEEDS[kind]:
        if key not in m:
            found = [*found, ("", f"is a {kind} message without {key!r}")]
    if kind == "text" and ("text" in m) == ("template" in m):
        found = [*found, ("", "needs exactly one of 'text' and 'template'")]
    if kind == "resource" and "text" not in m and "file" not in m:
        found = [*found, ("", "is a resource message without 'text' or 'file'")]
    template, file = m.get("template"), m.get("file")
    if type(template) is str and template not in templates:
        found = [*found, ("template", f"{template!r} is not in the bundle's templates")]
    if type(file) is str and file not in resources and (kind != "resource" or "text" not in m):
        found = [*found, ("file", f"{file!r} is not in the bundle's resources")]
    return head, found


def _schema_rules(a: dict[str, object]) -> Problems:
    schema = a.get("schema")
    if "schema" in a and (type(schema) is not dict or argtypes.unknown_keywords(schema)):
        return [("schema", "is not an object of supported JSON Schema keywords")]
    return _OK


def _string_only_rules(a: dict[str, object]) -> Problems:
    """As the model's validator: ``pattern`` and ``enum`` apply to string arguments."""
    if a.get("type", "string") == "string":
        return _OK
    return [(key, "applies to string arguments only") for key in ("pattern", "enum") if key in a]


def _default_rules(a: dict[str, object]) -> Problems:
    if "default" not in a:
        return _OK
    # the usual argument, a string without a schema: no keyword to look for, and a default
    # is right when it is a string (what argtypes.check says of it, quicker)
    if "schema" not in a and a.get("type", "string") == "string":
        fit = type(a["default"]) is str
    else:
        fit = argtypes.check(a, a["default"]) is None
    return _OK if fit else [("default", "does not fit the argument's type")]


def _pattern_rules(a: dict[str, object]) -> Problems:
    """As the model's validator: the pattern compiles for the linear-time matcher (RE2)."""
    pattern = a.get("pattern")
    if type(pattern) is str:
        try:
            compile_pattern(pattern)
        except Exception as exc:  # PatternError, or anything the binding raises
            return [("pattern", f"is not a valid pattern: {exc}")]
    return _OK


# ---- the fast pass ------------------------------------------------------------------------
def valid(b: Any) -> bool:
    """True exactly when :class:`_Check` finds no problem in ``b``."""
    if not _top_ok(b):
        return False
    templates, resources, prompts = b["templates"], b["resources"], b["prompts"]
    names = set()
    for p in prompts:  # one loop, no call per prompt: this is most of a large bundle's check
        if not fits(p, PROMPT):
            return False
        args = p["arguments"]
        # each rule called only where it can say something (not _default_rules for the usual
        # string default of a string argument without a schema: it finds those right)
        for a in args:
            if not fits(a, ARGUMENT) or ("schema" in a and _schema_rules(a)) or (
                    "type" in a and _string_only_rules(a)) or (
                    "default" in a and (type(a["default"]) is not str or "schema" in a or a.get(
                        "type", "string") != "string") and _default_rules(a)) or (
                    "pattern" in a and _pattern_rules(a)):
                return False
        if len(args) > 1 and len({a["name"] for a in args}) != len(args):
            return False
        for m in p["messages"]:
            if not fits(m, MESSAGE):
                return False
            if _plain_text(m):  # _message_rules has nothing to say of it
                continue
            head, tail = _message_rules(m, templates, resources)
            if head or tail:
                return False
        names.add(p["name"])
    return len(names) == len(prompts)


def _plain_text(m: dict[str, object]) -> bool:
    """A text message (of a shape :func:`fits` passed) of which ``_message_rules`` says
    nothing: inline text, a valid role, no loop, no template or file to look up. The usual
    message, told at the cost of a few lookups instead of the rules' two lists."""
    return (m.get("type") == "text" and "text" in m and "template" not in m
            and "file" not in m and "loopItem" not in m and "loopOver" not in m
            and type(m.get("role")) is str and m["role"] in _ROLES)


def _top_ok(b: Any) -> bool:
    """Everything of the bundle but its prompts: its keys, package, source and resources."""
    return (type(b) is dict and b.keys() == BUNDLE.allowed and fits(b, BUNDLE)
            and fits(b["package"], PACKAGE) and fits(b["source"], SOURCE)
            and all(fits(res, RESOURCE) and not _resource_rules(res)
                    for res in b["resources"].values()))


def problems(bundle: Any) -> list[str]:
    """Everything wrong with the shape of ``bundle`` (the first few), or []."""
    if valid(bundle):
        return []
    check = _Check(bundle)
    with contextlib.suppress(_Found):
        check.run()
    return check.problems or ["the bundle's shape is invalid"]  # never: the passes agree


# ---- the worded pass ----------------------------------------------------------------------
class _Check:
    """The same table and rules as :func:`valid`, each problem worded with its place."""

    def __init__(self, bundle: dict[str, object]) -> None:
        self.bundle = bundle
        self.problems: list[str] = []
        self.templates: dict[str, object] = {}
        self.resources: dict[str, object] = {}

    def bad(self, where: str, what: str) -> None:
        self.problems.append(f"{where} {what}")
        if len(self.problems) >= MAX_REPORTED:
            raise _Found

    def report(self, where: str, found: Problems) -> None:
        for key, what in found:
            self.bad(f"{where}.{key}" if key else where, what)

    def keys(self, obj: Any, where: str, shape: Shape, required: tuple[str, ...] | None = None
             ) -> bool:
        """``obj`` is an object of ``shape``'s keys only, with every required one."""
        if type(obj) is not dict:
            self.bad(where, "is not an object")
            return False
        if not shape.allowed.issuperset(obj):
            self.bad(where, "has unknown keys " + ", ".join(sorted(set(obj) - shape.allowed)))
        for key in shape.required if required is None else required:
            if key not in obj:
                self.bad(where, f"lacks {key!r}")
        return True

    def fields(self, obj: dict[str, object], where: str, shape: Shape, keys: tuple[str, ...]
               ) -> None:
        """Each of ``keys`` that is present is right by the table (null included: refused)."""
        for key in keys:
            if key in obj and not shape.ok(key, obj[key]):
                self.bad(f"{where}.{key}", shape.words[key])

    def items(self, obj: dict[str, object], where: str, key: str) -> list[Any]:
        """The list under ``key``, or [] after saying it is not one."""
        value = obj.get(key)
        if type(value) is not list:
            self.bad(f"{where}.{key}", "is not a list")
            return []
        return value

    # ---- the parts -------------------------------------------------------------------
    def run(self) -> None:
        b = self.bundle
        if not self.keys(b, "the bundle", BUNDLE, tuple(sorted(BUNDLE.allowed))):
            return
        if not BUNDLE.ok("format", b.get("format")):
            self.bad("format", BUNDLE.words["format"])
        self.package(b.get("package"))
        self.source(b.get("source"))
        if BUNDLE.ok("templates", b.get("templates")):
            self.templates = b["templates"]  # type: ignore[assignment]
        else:
            self.bad("templates", BUNDLE.words["templates"])
        resources = b.get("resources")
        if type(resources) is dict:
            self.resources = resources
            for path, res in resources.items():
                self.resource(res, f"resources.{path}")
        else:
            self.bad("resources", BUNDLE.words["resources"])
        prompts = b.get("prompts")
        if type(prompts) is list:
            names: set[str] = set()
            for i, prompt in enumerate(prompts):
                name = self.prompt(prompt, f"prompts.{i}")
                if name is not None:
                    if name in names:
                        self.bad(f"prompts.{i}.name", f"{name!r} is used by two prompts")
                    names.add(name)
        else:
            self.bad("prompts", "is not a list")
        if "digest" in b and not BUNDLE.ok("digest", b["digest"]):
            self.bad("digest", BUNDLE.words["digest"])

    def package(self, pkg: Any) -> None:
        if self.keys(pkg, "package", PACKAGE):
            self.fields(pkg, "package", PACKAGE, tuple(PACKAGE.fields))

    def source(self, src: Any) -> None:
        if self.keys(src, "source", SOURCE):
            self.fields(src, "source", SOURCE, tuple(SOURCE.fields))

    def resource(self, res: Any, where: str) -> None:
        if self.keys(res, where, RESOURCE):
            self.fields(res, where, RESOURCE, tuple(RESOURCE.fields))
            self.report(where, _resource_rules(res))

    def prompt(self, p: Any, where: str) -> str | None:
        if not self.keys(p, where, PROMPT):
            return None
        self.fields(p, where, PROMPT, ("name", "title", "description", "source",
                                       "resultDescription"))
        if "icons" in p:
            for j, icon in enumerate(self.items(p, where, "icons")):
                self.nested(icon, f"{where}.icons.{j}", ICON)
        seen: set[Any] = set()
        for j, arg in enumerate(self.items(p, where, "arguments")):
            if self.argument(arg, f"{where}.arguments.{j}"):
                if arg["name"] in seen:
                    self.bad(f"{where}.arguments.{j}.name", "is declared twice")
                seen.add(arg["name"])
        for j, msg in enumerate(self.items(p, where, "messages")):
            self.message(msg, f"{where}.messages.{j}")
        self.fields(p, where, PROMPT, ("whitespace", *CARRIED))
        name = p.get("name")
        return name if type(name) is str else None

    def argument(self, a: Any, where: str) -> bool:
        if not self.keys(a, where, ARGUMENT):
            return False
        if "name" in a and type(a["name"]) is not str:  # then its pattern, below
            self.bad(f"{where}.name", words_of("string"))
        self.fields(a, where, ARGUMENT, ("title", "description", "pattern"))
        if not ARGUMENT.ok("name", a.get("name")):
            self.bad(f"{where}.name", ARGUMENT.words["name"])
            return False
        if "type" in a and not ARGUMENT.ok("type", a["type"]):
            self.bad(f"{where}.type", ARGUMENT.words["type"])
            return True
        found = _schema_rules(a)
        if found:
            self.report(where, found)
            return True
        self.report(where, _string_only_rules(a) + _default_rules(a))
        self.fields(a, where, ARGUMENT, ("required", "enum", "examples", "maxLength"))
        self.report(where, _pattern_rules(a))
        return True

    def message(self, m: Any, where: str) -> None:
        if not self.keys(m, where, MESSAGE):
            return
        head, tail = _message_rules(m, self.templates, self.resources)
        self.report(where, head)
        self.fields(m, where, MESSAGE, ("strip", "omitIfBlank", "continues"))
        kind = m.get("type")
        if not MESSAGE.ok("type", kind):
            self.bad(f"{where}.type", MESSAGE.words["type"])
            return
        self.fields(m, where, MESSAGE, ("text", "template", "file", "uri", "mimeType", "name",
                                        "title", "description", "argument", "loopItem",
                                        "loopOver"))
        self.report(where, tail)
        self.fields(m, where, MESSAGE, ("size",))
        if "annotations" in m:
            self.nested(m["annotations"], f"{where}.annotations", ANNOTATIONS)

    def nested(self, obj: Any, where: str, shape: Shape) -> None:
        """An object of plain keys (an icon, annotations): each key worded on its own."""
        if self.keys(obj, where, shape):
            self.fields(obj, where, shape, tuple(shape.fields))
