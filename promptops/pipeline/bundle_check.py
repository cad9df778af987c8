"""The whole shape of a bundle, checked with the standard library on serve's cold path.

``promptops serve --bundle`` must refuse at load every bundle that ``promptops verify``
refuses, or a request would meet the problem later as a KeyError (-32603). Verify's
schema is the pydantic model in :mod:`promptops.pipeline.bundle_schema`, which serving must not
import (pydantic costs ~100 ms at start), so this module restates it: every key, type,
literal, pattern and bound of that model, with ``extra`` keys refused. It also checks
what serving relies on beyond the model, which verify then checks too (it loads through
here first): each message has the fields its ``type`` needs, every ``template`` and
``file`` it names exists in the bundle, a resource has exactly one of ``text``/``blob``,
prompt and argument names are unique, and optional fields are absent rather than
``null`` (the build never writes ``null`` there, and serving would pass it on to
clients whose schema has no null).

It runs on every start, so it comes in two passes: :func:`valid`, a fast yes/no in
straight-line code (about 3 µs per prompt of two arguments and two messages: 30 ms for
10,000 prompts, next to the ~70 ms ``json.loads`` of such a bundle takes), and only when
that says no, the detailed :class:`_Check` that words the first few problems with their
location. A test holds the two to the same answer on thousands of mutated bundles.
"""

from __future__ import annotations

import contextlib
from typing import Any

from promptops.pipeline import argtypes
from promptops.pipeline import bundle_types as t
from promptops.pipeline.bundle_types import FORMAT
from promptops.sandbox import limits as bounds
from promptops.sandbox.patterns import compile_pattern

# The keys come from the one statement of the format, the TypedDicts.
TOP_KEYS = t.keys(t.Bundle)
PACKAGE_KEYS = t.keys(t.PackageInfo)
PROMPT_KEYS = t.keys(t.Prompt)
ARGUMENT_KEYS = t.keys(t.Argument)
MESSAGE_KEYS = t.keys(t.Message)
ICON_KEYS = t.keys(t.Icon)
ANNOTATION_KEYS = t.keys(t.Annotations)
RESOURCE_KEYS = t.keys(t.Resource)
SOURCE_KEYS = t.keys(t.SourceInfo)
MESSAGE_STRINGS = ("text", "template", "file", "uri", "mimeType", "name", "title",
                   "description", "argument", "loopItem", "loopOver")
NEEDS = {  # what serving reads from a message of each type, besides role and type
    "text": (), "image": ("file", "mimeType"), "audio": ("file", "mimeType"),
    "resource": ("uri", "mimeType"), "resource_link": ("uri", "name"), "history": ("argument",),
}
ARG_TYPES = ("string", "number", "integer", "boolean", "array", "object")
ROLES = ("user", "assistant", "system")
# The carried fields (model, tools, output, samples, metadata): JSON, of this shape.
CARRIED = {"model": dict, "tools": list, "output": dict, "samples": list, "metadata": dict}
MAX_REPORTED = 5


class _Found(Exception):
    """Enough problems to refuse the bundle: stop looking."""


class _Check:
    def __init__(self, bundle: dict[str, object]) -> None:
        self.bundle = bundle
        self.problems: list[str] = []
        self.templates: dict[str, object] = {}
        self.resources: dict[str, object] = {}

    def bad(self, where: str, what: str) -> None:
        self.problems.append(f"{where} {what}")
        if len(self.problems) >= MAX_REPORTED:
            raise _Found

    def keys(self, obj: Any, where: str, allowed: frozenset[str], required: tuple[str, ...]
             ) -> bool:
        """``obj`` is an object with only ``allowed`` keys and every ``required`` one."""
        if type(obj) is not dict:
            self.bad(where, "is not an object")
            return False
        if not allowed.issuperset(obj):
            self.bad(where, "has unknown keys " + ", ".join(sorted(set(obj) - allowed)))
        for key in required:
            if key not in obj:
                self.bad(where, f"lacks {key!r}")
        return True

    def strings(self, obj: dict[str, object], where: str, fields: tuple[str, ...]) -> None:
        """Each of ``fields`` that is present is a string (null included: refused)."""
        for key in fields:
            if key in obj and type(obj[key]) is not str:
                self.bad(f"{where}.{key}", "is not a string")

    def string_list(self, value: Any, where: str) -> None:
        if type(value) is not list or not all(type(v) is str for v in value):
            self.bad(where, "is not a list of strings")

    # ---- the parts -------------------------------------------------------------------
    def run(self) -> None:
        b = self.bundle
        if not self.keys(b, "the bundle", TOP_KEYS, tuple(sorted(TOP_KEYS))):
            return
        if b.get("format") != FORMAT:
            self.bad("format", f"is not {FORMAT!r}")
        self.package(b.get("package"))
        self.source(b.get("source"))
        templates, resources = b.get("templates"), b.get("resources")
        if type(templates) is dict and all(type(v) is str for v in templates.values()):
            self.templates = templates
        else:
            self.bad("templates", "is not an object of strings")
        if type(resources) is dict:
            self.resources = resources
            for path, res in resources.items():
                self.resource(res, path)
        else:
            self.bad("resources", "is not an object")
        prompts = b.get("prompts")
        if type(prompts) is not list:
            self.bad("prompts", "is not a list")
            return
        names: set[str] = set()
        for i, prompt in enumerate(prompts):
            name = self.prompt(prompt, i)
            if name is not None:
                if name in names:
                    self.bad(f"prompts.{i}.name", f"{name!r} is used by two prompts")
                names.add(name)

    def package(self, pkg: Any) -> None:
        if not self.keys(pkg, "package", PACKAGE_KEYS, ("name", "version", "cacheScope")):
            return
        self.strings(pkg, "package", ("name", "version", "description", "instructions"))
        if pkg.get("cacheScope", "public") not in ("public", "private"):
            self.bad("package.cacheScope", "is not 'public' or 'private'")
        if "limits" in pkg and not _limits_ok(pkg["limits"]):
            self.bad("package.limits", "is not renderTimeoutMs and/or maxOutputChars within "
                     "their caps (promptops/sandbox/limits.py)")
        if pkg.get("systemRole", "user") not in ("user", "assistant"):
            self.bad("package.systemRole", "is not 'user' or 'assistant'")
        if pkg.get("whitespace", "jinja") not in ("standalone", "jinja"):
            self.bad("package.whitespace", "is not 'standalone' or 'jinja'")
        if pkg.get("tools", "off") not in TOOL_VIEWS:
            self.bad("package.tools", "is not 'off', 'catalog' or 'per-prompt'")

    def source(self, src: Any) -> None:
        if not self.keys(src, "source", SOURCE_KEYS, ("commit", "tree", "dirty", "path")):
            return
        for key in ("commit", "tree"):
            if src.get(key) is not None and type(src[key]) is not str:
                self.bad(f"source.{key}", "is not a string or null")
        if "dirty" in src and type(src["dirty"]) is not bool:
            self.bad("source.dirty", "is not true or false")
        self.strings(src, "source", ("path",))

    def resource(self, res: Any, path: str) -> None:
        where = f"resources.{path}"
        if not self.keys(res, where, RESOURCE_KEYS, ("mimeType",)):
            return
        self.strings(res, where, ("mimeType", "text", "blob"))
        if ("text" in res) == ("blob" in res):
            self.bad(where, "needs exactly one of 'text' and 'blob'")

    def prompt(self, p: Any, i: int) -> str | None:
        where = f"prompts.{i}"
        if not self.keys(p, where, PROMPT_KEYS, ("name", "arguments", "messages", "source")):
            return None
        self.strings(p, where, ("name", "title", "description", "source"))
        described = p.get("resultDescription", False)
        if described is not False and type(described) is not str:
            self.bad(f"{where}.resultDescription", "is not a string or false")
        if "icons" in p:
            icons = p["icons"]
            if type(icons) is not list:
                self.bad(f"{where}.icons", "is not a list")
            else:
                for j, icon in enumerate(icons):
                    self.icon(icon, f"{where}.icons.{j}")
        args = p.get("arguments")
        if type(args) is not list:
            self.bad(f"{where}.arguments", "is not a list")
        else:
            seen: set[Any] = set()
            for j, arg in enumerate(args):
                if self.argument(arg, where, j):
                    if arg["name"] in seen:
                        self.bad(f"{where}.arguments.{j}.name", "is declared twice")
                    seen.add(arg["name"])
        messages = p.get("messages")
        if type(messages) is not list:
            self.bad(f"{where}.messages", "is not a list")
        else:
            for j, msg in enumerate(messages):
                self.message(msg, where, j)
        if p.get("whitespace", "jinja") not in ("standalone", "jinja"):
            self.bad(f"{where}.whitespace", "is not 'standalone' or 'jinja'")
        for key, kind in CARRIED.items():
            if key in p and not _carried_ok(key, p[key]):
                self.bad(f"{where}.{key}", f"is not {'a list' if kind is list else 'an object'}"
                         " of the documented shape")
        name = p.get("name")
        return name if type(name) is str else None

    def argument(self, a: Any, prompt: str, j: int) -> bool:
        where = f"{prompt}.arguments.{j}"
        if not self.keys(a, where, ARGUMENT_KEYS, ("name",)):
            return False
        self.strings(a, where, ("name", "title", "description", "pattern"))
        name = a.get("name")
        if type(name) is not str or not _arg_name(name):
            self.bad(f"{where}.name", "is not a valid argument name (1 to 128 characters, no "
                     "control characters)")
            return False
        if a.get("type", "string") not in ARG_TYPES:
            self.bad(f"{where}.type", "is not one of " + ", ".join(ARG_TYPES))
            return True
        if "schema" in a and (type(a["schema"]) is not dict
                              or argtypes.unknown_keywords(a["schema"])):
            self.bad(f"{where}.schema", "is not an object of supported JSON Schema keywords")
            return True
        if "default" in a and argtypes.check(a, a["default"]) is not None:
            self.bad(f"{where}.default", "does not fit the argument's type")
        if "required" in a and type(a["required"]) is not bool:
            self.bad(f"{where}.required", "is not true or false")
        for key in ("enum", "examples"):
            if key in a:
                self.string_list(a[key], f"{where}.{key}")
        limit = a.get("maxLength", 1)
        if type(limit) is not int or limit < 1:
            self.bad(f"{where}.maxLength", "is not an integer of at least 1")
        pattern = a.get("pattern")
        if type(pattern) is str:
            try:
                compile_pattern(pattern)
            except Exception as exc:  # PatternError, or anything the binding raises
                self.bad(f"{where}.pattern", f"is not a valid pattern: {exc}")
        return True

    def message(self, m: Any, prompt: str, j: int) -> None:
        where = f"{prompt}.messages.{j}"
        if not self.keys(m, where, MESSAGE_KEYS, ("type",)):
            return
        if m.get("type") == "history":
            if "role" in m:
                self.bad(f"{where}.role", "is given on a history item")
        elif m.get("role") not in ROLES:
            self.bad(f"{where}.role", "is not 'user', 'assistant' or 'system'")
        if ("loopItem" in m) != ("loopOver" in m):
            self.bad(where, "needs both or neither of 'loopItem' and 'loopOver'")
        for flag in ("strip", "omitIfBlank", "continues"):
            if flag in m and type(m[flag]) is not bool:
                self.bad(f"{where}.{flag}", "is not true or false")
        kind = m.get("type")
        needs = NEEDS.get(kind) if type(kind) is str else None
        if needs is None:
            self.bad(f"{where}.type", "is not one of " + ", ".join(NEEDS))
            return
        self.strings(m, where, MESSAGE_STRINGS)
        for key in needs:
            if key not in m:
                self.bad(where, f"is a {kind} message without {key!r}")
        if kind == "text" and ("text" in m) == ("template" in m):
            self.bad(where, "needs exactly one of 'text' and 'template'")
        if kind == "resource" and "text" not in m and "file" not in m:
            self.bad(where, "is a resource message without 'text' or 'file'")
        if type(m.get("template")) is str and m["template"] not in self.templates:
            self.bad(f"{where}.template", f"{m['template']!r} is not in the bundle's templates")
        if type(m.get("file")) is str and m["file"] not in self.resources and (
                kind != "resource" or "text" not in m):
            self.bad(f"{where}.file", f"{m['file']!r} is not in the bundle's resources")
        if "size" in m and type(m["size"]) is not int:
            self.bad(f"{where}.size", "is not an integer")
        if "annotations" in m:
            self.annotations(m["annotations"], f"{where}.annotations")

    def icon(self, icon: Any, where: str) -> None:
        if not self.keys(icon, where, ICON_KEYS, ("src",)):
            return
        self.strings(icon, where, ("src", "mimeType"))
        if "sizes" in icon:
            self.string_list(icon["sizes"], f"{where}.sizes")
        if "theme" in icon and icon["theme"] not in ("light", "dark"):
            self.bad(f"{where}.theme", "is not 'light' or 'dark'")

    def annotations(self, ann: Any, where: str) -> None:
        if not self.keys(ann, where, ANNOTATION_KEYS, ()):
            return
        if "audience" in ann and (type(ann["audience"]) is not list or any(
                v not in ("user", "assistant") for v in ann["audience"])):
            self.bad(f"{where}.audience", "is not a list of 'user'/'assistant'")
        if "priority" in ann:
            prio = ann["priority"]
            if type(prio) not in (int, float) or not 0 <= prio <= 1:
                self.bad(f"{where}.priority", "is not a number from 0 to 1")
        self.strings(ann, where, ("lastModified",))


def problems(bundle: Any) -> list[str]:
    """Everything wrong with the shape of ``bundle`` (the first few), or []."""
    if valid(bundle):
        return []
    check = _Check(bundle)
    with contextlib.suppress(_Found):
        check.run()
    return check.problems or ["the bundle's shape is invalid"]  # never: the passes agree


# ---- the fast pass: the same rules as _Check, as one yes/no ---------------------------------
_STRS = {str}
_AUDIENCE = {"user", "assistant"}
TOOL_VIEWS = ("off", "catalog", "per-prompt")


def valid(b: Any) -> bool:
    """True exactly when :class:`_Check` finds no problem in ``b``."""
    if not (type(b) is dict and b.keys() == TOP_KEYS and b["format"] == FORMAT):
        return False
    pkg, src, templates, resources = b["package"], b["source"], b["templates"], b["resources"]
    if not (type(pkg) is dict and PACKAGE_KEYS.issuperset(pkg) and _str(pkg.get("name"))
            and _str(pkg.get("version")) and pkg.get("cacheScope") in ("public", "private")
            and type(pkg.get("description", "")) is str
            and type(pkg.get("instructions", "")) is str
            and ("limits" not in pkg or _limits_ok(pkg["limits"]))
            and pkg.get("systemRole", "user") in ("user", "assistant")
            and pkg.get("whitespace", "jinja") in ("standalone", "jinja")
            and pkg.get("tools", "off") in TOOL_VIEWS):
        return False
    if not (type(src) is dict and src.keys() == SOURCE_KEYS and type(src["dirty"]) is bool
            and type(src["path"]) is str and (src["commit"] is None or type(src["commit"]) is str)
            and (src["tree"] is None or type(src["tree"]) is str)):
        return False
    if not (type(templates) is dict and (not templates or set(map(type, templates.values()))
                                         == _STRS)):
        return False
    if type(resources) is not dict or not all(map(_resource_ok, resources.values())):
        return False
    prompts = b["prompts"]
    if type(prompts) is not list:
        return False
    names = set()
    for p in prompts:
        if type(p) is not dict or not _prompt_ok(p, templates, resources):
            return False
        names.add(p["name"])
    return len(names) == len(prompts)


def _str(value: Any) -> bool:
    return type(value) is str


def _arg_name(name: str) -> bool:
    """The model's argument name pattern (1-128 characters, no C0 control or DEL).

    Printable ASCII (the usual name) has neither, which two C-speed tests say."""
    return 0 < len(name) <= 128 and ((name.isascii() and name.isprintable()) or not any(
        c < " " or c == "\x7f" for c in name))


def _carried_ok(key: str, value: Any) -> bool:
    """A carried field has the shape the build writes (its content is the author's JSON)."""
    if type(value) is not CARRIED[key]:
        return False
    if key == "tools":
        return all(type(v) is dict and type(v.get("name")) is str for v in value)
    if key == "samples":
        return all(type(v) is dict and type(v.get("name")) is str
                   and type(v.get("arguments")) is dict for v in value)
    return True


def _limits_ok(value: Any) -> bool:
    """The manifest's LimitsConfig: each bound an integer from 1 to its hard cap."""
    caps = {"renderTimeoutMs": bounds.MAX_TIMEOUT_MS, "maxOutputChars": bounds.MAX_OUTPUT_CHARS}
    return type(value) is dict and all(
        key in caps and type(v) is int and 1 <= v <= caps[key] for key, v in value.items())


def _strs(value: list[Any]) -> bool:
    return not value or set(map(type, value)) == _STRS


def _resource_ok(r: Any) -> bool:
    return (type(r) is dict and RESOURCE_KEYS.issuperset(r) and type(r.get("mimeType")) is str
            and ("text" in r) != ("blob" in r) and type(r.get("text", r.get("blob"))) is str)


def _prompt_ok(p: dict[str, object], templates: dict[str, object],
               resources: dict[str, object]) -> bool:
    g = p.get
    if not (PROMPT_KEYS.issuperset(p) and type(g("name")) is str and type(g("source")) is str
            and type(g("title", "")) is str and type(g("description", "")) is str):
        return False
    if "resultDescription" in p and p["resultDescription"] is not False and type(
            p["resultDescription"]) is not str:
        return False
    if "icons" in p and not (type(p["icons"]) is list and all(map(_icon_ok, p["icons"]))):
        return False
    args, messages = g("arguments"), g("messages")
    if type(args) is not list or type(messages) is not list:
        return False
    for a in args:
        if type(a) is not dict or not _argument_ok(a):
            return False
    if len(args) > 1 and len({a["name"] for a in args}) != len(args):
        return False
    for m in messages:
        if type(m) is not dict or not _message_ok(m, templates, resources):
            return False
    return p.get("whitespace", "jinja") in ("standalone", "jinja") and all(
        _carried_ok(key, p[key]) for key in CARRIED if key in p)


_ARGUMENT_TYPES = {"name": str, "title": str, "description": str, "required": bool,
                   "enum": list, "examples": list, "pattern": str,
                   "maxLength": int, "type": str, "schema": dict}
_MESSAGE_TYPES = {k: str for k in MESSAGE_STRINGS} | {"role": str, "type": str, "size": int,
                                                       "annotations": dict, "strip": bool,
                                                       "omitIfBlank": bool,
                                                       "continues": bool}


def _argument_ok(a: dict[str, object]) -> bool:
    types = _ARGUMENT_TYPES
    for key, value in a.items():
        if key != "default" and type(value) is not types.get(key):
            return False
    # the types are right now (the loop above); the isinstance checks say so to mypy
    name, longest = a.get("name"), a.get("maxLength", 1)
    enum, examples, pattern = a.get("enum", []), a.get("examples", []), a.get("pattern")
    schema = a.get("schema", {})
    # the usual argument, a string without a schema: no keyword to look for, and a
    # default is right when it is a string (what argtypes.check says of it, quicker)
    plain = "schema" not in a and a.get("type", "string") == "string"
    if not plain and (a.get("type", "string") not in ARG_TYPES or not isinstance(schema, dict)
                      or argtypes.unknown_keywords(schema)):
        return False
    if "default" in a and not (isinstance(a["default"], str) if plain
                               else argtypes.check(a, a["default"]) is None):
        return False
    return (isinstance(name, str) and _arg_name(name)
            and isinstance(longest, int) and longest >= 1
            and isinstance(enum, list) and _strs(enum)
            and isinstance(examples, list) and _strs(examples)
            and (pattern is None or (isinstance(pattern, str) and _pattern_ok(pattern))))


def _pattern_ok(pattern: str) -> bool:
    """As the model's validator: the pattern compiles for the linear-time matcher (RE2)."""
    try:
        compile_pattern(pattern)
    except Exception:  # PatternError, or anything the binding raises
        return False
    return True


def _message_ok(m: dict[str, object], templates: dict[str, object], resources: dict[str, object]
                ) -> bool:
    types = _MESSAGE_TYPES
    for key, value in m.items():
        if type(value) is not types.get(key):
            return False
    kind = m.get("type")
    needs = NEEDS.get(kind) if isinstance(kind, str) else None
    if needs is None or ("loopItem" in m) != ("loopOver" in m):
        return False
    if kind == "history":
        return "role" not in m and "argument" in m
    if m.get("role") not in ROLES:
        return False
    if kind == "text":
        if "template" in m:
            return "text" not in m and m["template"] in templates and _rest_ok(m, resources)
        return "text" in m and _rest_ok(m, resources)
    for key in needs:
        if key not in m:
            return False
    if kind == "resource" and "text" not in m and "file" not in m:
        return False
    if "template" in m and m["template"] not in templates:
        return False
    return _rest_ok(m, resources)


def _rest_ok(m: dict[str, object], resources: dict[str, object]) -> bool:
    if "file" in m and m["file"] not in resources and (m["type"] != "resource" or "text" not in m):
        return False
    return "annotations" not in m or _annotations_ok(m["annotations"])


def _icon_ok(i: Any) -> bool:
    return (type(i) is dict and ICON_KEYS.issuperset(i) and type(i.get("src")) is str
            and type(i.get("mimeType", "")) is str
            and ("sizes" not in i or (type(i["sizes"]) is list and _strs(i["sizes"])))
            and i.get("theme", "light") in ("light", "dark"))


def _annotations_ok(a: Any) -> bool:
    if not (type(a) is dict and ANNOTATION_KEYS.issuperset(a)
            and type(a.get("lastModified", "")) is str):
        return False
    if "audience" in a and not (type(a["audience"]) is list and all(
            type(v) is str and v in _AUDIENCE for v in a["audience"])):
        return False
    if "priority" in a:
        prio = a["priority"]
        return type(prio) in (int, float) and 0 <= prio <= 1
    return True
