"""Jinja files of a folder import that extend, include or import one another.

Why: a folder of Jinja prompts is usually a tree, not a list: ``lesson.j2`` says
``{% extends "base.j2" %}``, ``base.j2`` beside it holds the layout. Imported file by file,
``base.j2`` became a prompt and every file extending it was refused (``template 'base.j2' not
found in the package``: tests/corpus/speed4/import.yaml, session 13). A file that another
imported Jinja file reaches by ``extends``, ``include``, ``import`` or ``from ... import`` is a
**template** of the package (``templates/<its path in the folder>``), and each name that
reaches it is rewritten to that package path, so the package renders what jinja2 renders from
the original folder (tests/interop/test_import_inheritance.py judges it with jinja2 itself).

How a name is found, as the Jinja-family tools resolve it (docs/interop.md, "Templates"):

* ``./x`` and ``../x`` are relative to the file that names them (Nunjucks' rule, and the
  ``Environment.join_path`` override Jinja's documentation gives for relative names);
* any other name is a loader name (jinja2's ``FileSystemLoader``, Nunjucks' search path):
  relative to a loader folder the application chose. The folder import does not know it, so
  it looks in the naming file's own folder, then in each folder above it up to the folder
  being imported, and takes the nearest: the file a ``FileSystemLoader`` rooted at the
  nearest such folder would load. A name found at two levels is noted.

Nothing outside the imported folder is read: a name that resolves outside it is refused
with its file, line and column, and says which folder to import instead.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from promptops.interop import nunjucks
from promptops.interop.importers._common import JinjaNames, optional_argument
from promptops.interop.ir import IRPrompt, Loss, Message, Text
from promptops.interop.sources import (
    MAX_TOTAL_BYTES,
    SKIP_DIRS,
    SourceFile,
    SourceUnreadable,
    decode,
    read_bytes,
)
from promptops.sandbox.jinja_source import tokenize

# The Jinja family's own suffixes: the files read as one Jinja/Nunjucks template each.
SUFFIXES = (".j2", ".jinja", ".jinja2", ".njk", ".nunjucks")
MAX_TEMPLATES = 1_000  # files read as templates in one run, beyond the prompt files
_REF = re.compile(r"""\s*(extends|include|import|from)\s+("[^"\\]*"|'[^'\\]*')"""
                  r"""(?=\s*(?:\Z|ignore\b|with\b|without\b|import\b|as\b))""")
Key = tuple[Path, str]  # (the folder imported, the file's POSIX path below it)


@dataclass(frozen=True)
class Ref:
    """One static name in a tag: ``source[start:end]`` is its string literal, quotes too."""

    tag: str
    name: str
    start: int
    end: int
    line: int
    col: int


def references(source: str) -> list[Ref]:
    """The string-literal names of ``extends``/``include``/``import``/``from`` tags.

    A name given by a variable, a list or a conditional is not one: the package refuses those
    itself (``dynamic include``), with its own position. Tags inside ``{% raw %}`` and
    comments are text, as Jinja's lexer reads them.
    """
    refs: list[Ref] = []
    for tok in tokenize(source):
        if tok.kind != "block":
            continue
        m = _REF.match(source, tok.open_end, tok.close_start)
        if m is None:
            continue
        start = m.start(2)
        line_start = source.rfind("\n", 0, start) + 1
        refs.append(Ref(m.group(1), m.group(2)[1:-1], start, m.end(2),
                        source.count("\n", 0, start) + 1, start - line_start + 1))
    return refs


def candidates(name: str, own: str) -> list[str] | str:
    """The paths (below the imported folder) ``name`` may mean from the file ``own``, nearest
    first; a string saying why it means none. A path may climb out (``../x``): the caller
    refuses it, naming the folder to import instead."""
    folder = posixpath.dirname(own)
    if name.startswith(("./", "../")):
        return [posixpath.normpath(posixpath.join(folder, name))]
    pieces = [p for p in name.split("/") if p and p != "."]
    if not pieces:
        return "names no file"
    if ".." in pieces:
        return ("has '..' after its first part, which jinja2's loaders refuse; write it "
                "relative to the file ('../x.j2') or from the loader's folder")
    found = []
    while True:
        found.append(posixpath.join(folder, *pieces))
        if not folder:
            return found
        folder = posixpath.dirname(folder)


@dataclass
class Template:
    """A file the import writes as a package template rather than as a prompt."""

    key: Key
    shown: str
    path: str  # its package path
    text: str = ""  # Jinja source, names rewritten
    losses: list[Loss] = field(default_factory=list)
    refused: str | None = None
    used_by: list[str] = field(default_factory=list)


@dataclass
class Plan:
    """What the Jinja files of one import reach, and how each is written."""

    templates: dict[Key, Template] = field(default_factory=dict)
    texts: dict[Key, str] = field(default_factory=dict)  # each file's source, names rewritten
    refs: dict[Key, list[Key]] = field(default_factory=dict)  # the templates each names
    at: dict[Key, dict[Key, Ref]] = field(default_factory=dict)  # where it first names each
    shown: dict[Key, str] = field(default_factory=dict)  # each file as the user knows it
    refused: dict[Key, str] = field(default_factory=dict)  # ``file:line:col: why``
    notes: dict[Key, list[str]] = field(default_factory=dict)

    reached: dict[Key, list[Template]] = field(default_factory=dict)  # reach(), memoised

    def reach(self, key: Key) -> list[Template]:
        """The templates ``key`` reaches, directly or through others, in order of first use
        (memoised: every prompt of a wide tree asks, and so does :meth:`via`)."""
        if key in self.reached:
            return self.reached[key]
        seen: dict[Key, None] = {}
        stack = list(reversed(self.refs.get(key, [])))
        while stack:
            nxt = stack.pop()
            if nxt in seen or nxt == key:
                continue
            seen[nxt] = None
            stack.extend(reversed(self.refs.get(nxt, [])))
        found = self.reached[key] = [self.templates[k] for k in seen if k in self.templates]
        return found

    def blocked(self, key: Key) -> str | None:
        """Why the file cannot be imported (``file:line:col: why``): its own names, or a
        template it reaches that cannot be, named where the file leads to it."""
        if key in self.refused:
            return self.refused[key]
        for tpl in self.reach(key):
            why = tpl.refused or self.refused.get(tpl.key)
            if why:
                return self.via(key, tpl, f"which cannot be imported: {why}")
        return None

    def via(self, key: Key, tpl: Template, what: str) -> str:
        """``file:line:col: extends 'x' reaches T, <what>``: the tag of ``key`` that leads
        to the template ``tpl``, directly or through others."""
        for direct in self.refs.get(key, []):
            if direct == tpl.key or any(t is tpl for t in self.reach(direct)):
                ref = self.at[key][direct]
                return _where(self.shown.get(key, str(key[0] / key[1])), ref,
                              f"{ref.tag} {ref.name!r} reaches {tpl.shown}, {what}")
        return f"{self.shown.get(key, key[1])}: it reaches {tpl.shown}, {what}"  # pragma: no cover


class _Folder:
    """The files below one imported folder, read as import reads (no symlink, bounded)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.read: dict[str, str | None] = {}
        self.bytes = 0

    def text(self, rel: str) -> str | None:
        if rel in self.read:
            return self.read[rel]
        parts = rel.split("/")
        if rel.startswith("../") or rel == ".." or any(p.lower() in SKIP_DIRS for p in parts):
            return None
        try:
            data = read_bytes(self.root, rel)
            self.bytes += len(data)
            found: str | None = decode(data) if self.bytes <= MAX_TOTAL_BYTES else None
        except SourceUnreadable:
            found = None
        self.read[rel] = found
        return found


def jinja_file(rel: str) -> bool:
    return rel.lower().endswith(SUFFIXES)


def plan(sources: Iterable[SourceFile], taken: Callable[[str], bool], forced: str | None) -> Plan:
    """The templates the Jinja files among ``sources`` reach, each with a package path
    ``taken`` says is free (the target's files are never replaced), and every Jinja file's
    text with its names rewritten."""
    result = Plan()
    if forced not in (None, "promptfoo"):
        return result
    folders: dict[Path, _Folder] = {}
    shown: dict[Key, str] = {}
    queue: list[Key] = []
    for s in sources:
        if jinja_file(s.rel):
            key = (s.root, s.rel)
            shown[key] = s.shown
            queue.append(key)
    named: dict[Key, dict[int, Key]] = {}  # per file: literal offset -> the file it names
    while queue:
        key = queue.pop(0)
        if key in named:
            continue
        folder = folders.setdefault(key[0], _Folder(key[0]))
        text = folder.text(key[1])
        if text is None:
            continue  # the import reports an unreadable prompt file itself
        named[key] = {}
        result.texts[key] = text
        try:
            found = [(ref, _resolve(ref, key, folder, shown, result))
                     for ref in references(text)]
        except Exception as exc:  # a bug here: this file's refusal, never the import's
            result.refused[key] = (f"{shown[key]}: internal error while reading what it "
                                   f"includes ({type(exc).__name__}); this is a promptops "
                                   "bug, please report it")
            continue
        for ref, target in found:
            if target is None:
                continue
            named[key][ref.start] = target
            if target not in result.templates:
                if len(result.templates) >= MAX_TEMPLATES:
                    result.refused.setdefault(key, _where(shown[key], ref, (
                        f"more than {MAX_TEMPLATES} templates in one import; import the "
                        "folders in parts")))
                    continue
                result.templates[target] = Template(target, shown.setdefault(
                    target, str(target[0] / target[1])), "")
                queue.append(target)
            result.templates[target].used_by.append(shown[key])
    _paths(result, taken)
    for key, targets in named.items():
        text = result.texts[key]
        refs = {r.start: r for r in references(text)}
        out, pos = [], 0
        for start in sorted(targets):
            ref = refs[start]
            out += [text[pos:ref.start], _literal(result.templates[targets[start]].path)]
            pos = ref.end
        result.texts[key] = "".join(out) + text[pos:]
        result.refs[key] = list(dict.fromkeys(targets[s] for s in sorted(targets)))
        result.at[key] = {}
        for start in sorted(targets):
            result.at[key].setdefault(targets[start], refs[start])
    result.shown = shown
    for tpl in result.templates.values():
        _translate(tpl, result)
    return result


def _resolve(ref: Ref, key: Key, folder: _Folder, shown: dict[Key, str],
             result: Plan) -> Key | None:
    """The file ``ref`` names, or None with the naming file refused (the first reason)."""
    options = candidates(ref.name, key[1])
    if isinstance(options, str):
        result.refused.setdefault(key, _where(shown[key], ref, f"{ref.tag} {ref.name!r} "
                                                              f"{options}"))
        return None
    outside = [o for o in options if o == ".." or o.startswith("../")]
    if outside:
        result.refused.setdefault(key, _where(shown[key], ref, _outside(ref, key, outside[0])))
        return None
    found = [o for o in options if folder.text(o) is not None]
    if not found:
        looked = " and ".join(options[:1] + options[-1:] if len(options) > 1 else options)
        result.refused.setdefault(key, _where(shown[key], ref, (
            f"{ref.tag} {ref.name!r}: no such file in the folder being imported (looked for "
            f"{looked}{' and the folders between' if len(options) > 2 else ''}); import the "
            "folder that holds it, or add it")))
        return None
    if len(found) > 1:
        result.notes.setdefault(key, []).append(
            f"{ref.tag} {ref.name!r} read as {found[0]}, the nearest of {len(found)} files of "
            f"that name ({', '.join(found[1:])} too), as a loader rooted at its folder would")
    return (key[0], found[0])


def _outside(ref: Ref, key: Key, target: str) -> str:
    root = key[0].absolute()
    whole = Path(posixpath.normpath(posixpath.join(root.as_posix(), target)))
    common = Path(posixpath.commonpath([root.as_posix(), whole.as_posix()]))
    return (f"{ref.tag} {ref.name!r} names {whole}, outside the folder being imported "
            f"({root}); import reads nothing outside it: import the folder that holds both, "
            f"e.g. `promptops import {common}`")


def _where(shown: str, ref: Ref, why: str) -> str:
    return f"{shown}:{ref.line}:{ref.col}: {why}"


def _literal(path: str) -> str:
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _paths(result: Plan, taken: Callable[[str], bool]) -> None:
    """A package path per template: ``templates/<path in the folder>``, else with the
    folder's name in front, else numbered; never one the target or another template has."""
    used: set[str] = set()

    def free(path: str) -> bool:
        return path not in used and not taken(path)

    for tpl in result.templates.values():
        root, rel = tpl.key
        options = [f"templates/{rel}", f"templates/{root.absolute().name}/{rel}"]
        path = next((p for p in options if free(p)), None)
        n = 2
        while path is None:
            path = f"templates-{n}/{rel}" if free(f"templates-{n}/{rel}") else None
            n += 1
        used.add(path)
        tpl.path = path


def _translate(tpl: Template, result: Plan) -> None:
    """The template's text as the package holds it: Nunjucks as Jinja (what the prompt files
    of the family get, importers/promptfoo.py), and refused when Jinja cannot parse it."""
    text = result.texts.get(tpl.key)
    if text is None:  # pragma: no cover - a template is only planned once its text is read
        tpl.refused = f"{tpl.shown}: could not be read"
        return
    translated = nunjucks.to_jinja(text)
    tpl.text = translated.source
    tpl.losses = [Loss(*item) for item in translated.losses]
    error = JinjaNames(tpl.text).error
    if error is not None:
        tpl.refused = f"{tpl.shown}:{error.lineno or 0}:0: {error.message}"


# Names Jinja binds itself (a block's ``super()``, a loop's ``loop``, a macro's ``caller``):
# never arguments. ``args`` is the package's own (every argument, by name).
_IMPLICIT = frozenset({"loop", "caller", "varargs", "kwargs", "super", "self", "args"})


def complete(prompt: IRPrompt, key: Key, result: Plan, *, whole: bool) -> IRPrompt:
    """``prompt`` (imported from the file ``key``) with what the templates it reaches read.

    Each name a reached template reads is an argument as the file's own are (optional,
    rendering as a missing one does: importers/promptfoo.py), so the package renders what
    jinja2 does and lint finds every name declared; a template imported with losses makes
    the prompt lossy too. ``whole``: the file is also a template (named on the command line),
    so its prompt renders that template rather than a second copy of its text.
    """
    reached = result.reach(key)
    notes = list(prompt.notes) + result.notes.get(key, [])
    args = list(prompt.arguments)
    have = {a.name for a in args}
    for tpl in reached:
        names = JinjaNames(tpl.text)
        for name in names.ordered:
            if name not in have and name not in _IMPLICIT:
                have.add(name)
                args.append(optional_argument(
                    name, "array" if name in names.iterated else "string", notes))
    if args and not prompt.arguments:
        notes.append("Nunjucks renders a missing variable as empty: every argument is "
                     "optional, with the value that renders the same")
    losses = list(prompt.losses) + [
        Loss(tpl.path, f"the template it reaches ({tpl.shown}) was imported with losses")
        for tpl in reached if tpl.losses]
    messages = prompt.messages
    own = result.templates.get(key)
    if whole and own is not None and len(messages) == 1 and isinstance(messages[0], Message) \
            and messages[0].template == own.text:
        messages = (Message(messages[0].role, (Text("{% include " + _literal(own.path)
                                                     + " %}"),)),)
        notes.append(f"also a template other files reach: the prompt renders {own.path}")
    return replace(prompt, arguments=tuple(args), notes=tuple(notes), losses=tuple(losses),
                   messages=messages)
