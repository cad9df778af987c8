"""Stage 2: a source -> a validated package, and every problem of every file, coded.

Reads every file a package is made of and reports *all* problems of every file at once,
with positions (a user fixing twenty mistakes should not need twenty runs). Each problem
carries the lint rule it belongs to (``PO101`` invalid YAML, ``PO301`` a missing
include, ...), set here where it is found: nothing downstream recovers a code from the
wording of a message.

:func:`validate` returns a :class:`Validated`: the :class:`Package` every later stage
reads instead of touching files, the problems, and whether the package is complete. A
package that has problems may still be partly usable: when only some prompt files are
broken, ``package`` is the *partial* package of the prompt files without a problem (and
the templates and resources those reach), so lint still checks them. The include graph
is walked once, by :class:`~promptops.pipeline.templates.TemplateIndex`, and per-file
results come from the caller's :class:`~promptops.pipeline.memo.FileMemo`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from contextlib import suppress
from dataclasses import dataclass, field
from typing import TypeVar

from jinja2 import TemplateSyntaxError
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from promptops.errors import PackageError, Problem, did_you_mean
from promptops.git.objects import blob_id
from promptops.pipeline import prefetch
from promptops.pipeline.manifest import Manifest
from promptops.pipeline.mediatypes import TEXT_FALLBACK, guess_type
from promptops.pipeline.memo import FileMemo, PromptKey
from promptops.pipeline.model import PROMPT_NAME_RE, Message, PromptFile
from promptops.pipeline.source import MANIFEST, CachingSource, Origin, Refused, Source, inside
from promptops.pipeline.templates import TemplateIndex
from promptops.pipeline.yamlio.loader import LoadedFile, Loc, YamlProblem, decode, load_yaml
from promptops.pipeline.yamlio.messages import schema_problem

PROMPT_SUFFIX = ".prompt.yaml"
PROMPTS_DIR = "prompts/"
# A position, or how to compute it: positions need a slow round-trip parse, so they are
# worked out only for problems that are actually reported.
Where = tuple[int, int] | Callable[[], tuple[int, int]]
M = TypeVar("M", bound=BaseModel)

# The rule each kind of problem belongs to (docs/rules.md).
INVALID_YAML, SCHEMA, JINJA_SYNTAX, UNKNOWN_JINJA_NAME = "PO101", "PO102", "PO103", "PO104"
DUPLICATE_NAME, MISSING_INCLUDE, INCLUDE_OUTSIDE, RESOURCE_MISSING = (
    "PO106", "PO301", "PO304", "PO306")
LOAD_CODES = frozenset({INVALID_YAML, SCHEMA, JINJA_SYNTAX, UNKNOWN_JINJA_NAME, DUPLICATE_NAME,
                        MISSING_INCLUDE, INCLUDE_OUTSIDE, RESOURCE_MISSING})


@dataclass(frozen=True)
class PromptDef:
    name: str
    path: str
    spec: PromptFile
    file: LoadedFile


@dataclass(frozen=True)
class Package:
    manifest: Manifest
    manifest_file: LoadedFile
    prompts: tuple[PromptDef, ...]  # sorted by name
    templates: Mapping[str, str]  # every template file a prompt reaches, path -> source
    resources: Mapping[str, bytes]  # every file a prompt names, path -> bytes
    origin: Origin
    files: tuple[str, ...]  # every file of the package

    def prompt(self, name: str) -> PromptDef | None:
        return next((p for p in self.prompts if p.name == name), None)


@dataclass(frozen=True)
class Validated:
    """What validation found: the package (complete, partial or None) and its problems."""

    package: Package | None  # None when too much is broken to read any prompt
    problems: list[Problem]  # sorted, each with its rule code
    complete: bool  # no problem at all: ``package`` is the whole package
    index: TemplateIndex  # the parser that read the templates (lint reuses its ASTs)

    def require(self) -> Package:
        """The complete package; PackageError listing every problem otherwise."""
        if not self.complete or self.package is None:
            raise PackageError(self.problems)
        return self.package


def template_fields(message: Message) -> list[tuple[Loc, str]]:
    """(location inside the message, template source) for every templated string."""
    out: list[tuple[Loc, str]] = []
    if message.text is not None:
        out.append((("text",), message.text))
    if message.resource is not None:
        out.append((("resource", "uri"), message.resource.uri))
        if message.resource.text is not None:
            out.append((("resource", "text"), message.resource.text))
    if message.resource_link is not None:
        out.append((("resource_link", "uri"), message.resource_link.uri))
    return out


class Loader:
    """Reads YAML files of a package into models, collecting positioned, coded problems.

    The package validator below uses it, and so does the test-file loader
    (:mod:`promptops.testing.cases`): every file a package holds is read the same way.
    """

    def __init__(self, source: Source) -> None:
        self.source = source
        self.problems: list[Problem] = []

    def problem(self, path: str, pos: Where, message: str, code: str = SCHEMA) -> None:
        line, col = pos() if callable(pos) else pos
        self.problems.append(Problem(path, line, col, message, code))

    def load(self, path: str, raw: bytes | None = None) -> LoadedFile | None:
        """The parsed file; None with the problem recorded when it cannot be read."""
        try:
            return load_yaml(path, self.source.read(path) if raw is None else raw)
        except YamlProblem as exc:
            self.yaml_problem(exc)
        except FileNotFoundError as exc:
            self.unreadable(path, exc)
        return None

    def yaml_problem(self, exc: YamlProblem) -> None:
        p = exc.problem
        self.problems.append(Problem(p.path, p.line, p.col, p.message, INVALID_YAML))

    def unreadable(self, path: str, exc: FileNotFoundError) -> None:
        if isinstance(exc, Refused):  # a path the package rules refuse: PO306's business
            self.problem(path, (1, 1), f"this file is {exc.why}", RESOURCE_MISSING)
        else:
            self.problem(path, (1, 1), "file not found")

    def validate(self, model: type[M], file: LoadedFile, data: object) -> M | None:
        """``data`` as ``model``; None with a positioned problem per violation."""
        if not isinstance(data, dict):
            self.problem(file.path, (1, 1), "expected a YAML mapping at the top of the file")
            return None
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            for err in exc.errors():
                self.schema_problem(model, file, err)
        return None

    def schema_problem(self, model: type[BaseModel], file: LoadedFile,
                       err: ErrorDetails) -> None:
        pos, message = schema_problem(model, file, err)
        self.problem(file.path, pos, message)


@dataclass
class _Template:
    """A template file that was read: its text, its own problems, what it includes."""

    text: str
    problems: list[Problem] = field(default_factory=list)
    edges: list[_Edge] = field(default_factory=list)


@dataclass(frozen=True)
class _Edge:
    """A reference to a template file, from a prompt or a template, and where it is."""

    name: str  # normalised
    origin: str  # the file that names it
    at: Where


@dataclass
class _Prompt:
    """A prompt file that validated, with what its messages name."""

    prompt: PromptDef
    edges: list[_Edge] = field(default_factory=list)
    resources: dict[str, bytes] = field(default_factory=dict)


class _Validator(Loader):
    def __init__(self, source: Source, memo: FileMemo, index: TemplateIndex) -> None:
        super().__init__(source)
        self.memo, self.index = memo, index
        self._files: dict[str, _Template | Callable[[_Edge], Problem]] = {}

    # ---- prompt files ----------------------------------------------------------------
    def prompt_file(self, path: str) -> tuple[LoadedFile, PromptFile | None] | None:
        """A prompt file, loaded and validated; memoised by content for rebuilds.

        From git the content's name (the blob id) is known before reading it, so a file
        seen before is not even read; from the working tree it is computed from the bytes.
        """
        key = prompt_key(self.source, path)
        hit = self.memo.prompt(key) if key is not None else None
        if hit is not None:
            return hit
        try:
            raw = self.source.read(path)
        except FileNotFoundError as exc:
            self.unreadable(path, exc)
            return None
        # the git id of the bytes: the key a commit's copy of the same file has (so a review
        # of the working tree against a commit parses an unchanged file once), kept by a
        # caching source for the next validation, lint's cache key, the diff's checks
        key = key or ("prompt", path, self.source.content_id(path)
                      if isinstance(self.source, CachingSource) else blob_id(raw))
        hit = self.memo.prompt(key)
        if hit is not None:
            return hit
        loaded = self.load(path, raw)
        if loaded is None:
            return None
        spec = self.validate(PromptFile, loaded, loaded.data)
        if spec is not None:
            self.memo.keep_prompt(key, loaded, spec)
        return loaded, spec

    def messages(self, found: _Prompt) -> None:
        file, spec = found.prompt.file, found.prompt.spec
        if isinstance(spec.resultDescription, str):
            self.check_template(found, ("resultDescription",), spec.resultDescription)
        for i, msg in enumerate(spec.messages):
            base: Loc = ("messages", i)
            for loc, src in template_fields(msg):
                self.check_template(found, base + loc, src)
            if msg.template is not None:
                self.reference(found.edges, file.path, _position_of(file, (*base, "template")),
                               msg.template)
            if msg.resource is not None and msg.resource.file is not None:
                self.resource(found, (*base, "resource", "file"), msg.resource.file,
                              TEXT_FALLBACK)
            for kind in ("image", "audio"):
                media = getattr(msg, kind)
                if media is not None:
                    self.resource(found, (*base, kind, "file"), media.file, media.mimeType)

    def check_template(self, found: _Prompt, loc: Loc, source: str) -> None:
        file = found.prompt.file
        try:
            refs = self.index.references(source)
        except TemplateSyntaxError as exc:
            line, col, _ = file.block_start(loc)
            self.syntax(self.problems, file.path, (line + (exc.lineno or 1) - 1, col), exc)
            return
        for name, lineno in refs:
            # Positions cost a round-trip YAML parse: computed only if a problem is reported.
            def at(lineno: int = lineno) -> tuple[int, int]:
                line, col, block = file.block_start(loc)
                return (line + lineno - 1, col) if block or lineno > 1 else (line, col)

            self.reference(found.edges, file.path, at, name)

    def syntax(self, into: list[Problem], path: str, pos: Where,
               exc: TemplateSyntaxError) -> None:
        line, col = pos() if callable(pos) else pos
        message = f"template: {exc.message}"
        unknown = "unknown tag" in message or "No filter named" in message  # Jinja's words
        into.append(Problem(path, line, col, message,
                            UNKNOWN_JINJA_NAME if unknown else JINJA_SYNTAX))

    def reference(self, edges: list[_Edge], path: str, at: Where, name: str | None,
                  into: list[Problem] | None = None) -> None:
        problems = self.problems if into is None else into
        if name is None:
            line, col = at() if callable(at) else at
            problems.append(Problem(path, line, col, "dynamic include: name the template "
                                    "with a string literal", MISSING_INCLUDE))
            return
        norm = inside(name)
        if norm is None or norm != name:
            line, col = at() if callable(at) else at
            problems.append(Problem(path, line, col, f"include {name!r} is outside the package "
                                    "or not normalised", INCLUDE_OUTSIDE))
            return
        edges.append(_Edge(norm, path, at))

    def resource(self, found: _Prompt, loc: Loc, path: str, media: str | None) -> None:
        file = found.prompt.file
        norm = inside(path)

        def pos() -> tuple[int, int]:
            return file.position(loc)

        if norm is None:
            self.problem(file.path, pos, f"{path!r} is outside the package", RESOURCE_MISSING)
            return
        try:
            found.resources[norm] = self.source.read(norm)
        except Refused as exc:
            self.problem(file.path, pos, f"file {path!r} is {exc.why}", RESOURCE_MISSING)
            return
        except FileNotFoundError:
            hint = did_you_mean(norm, self.source.files())
            self.problem(file.path, pos, f"file {path!r} not found in the package{hint}",
                         RESOURCE_MISSING)
            return
        if media is None and guess_type(norm) is None:
            self.problem(file.path, pos, f"cannot tell the mimeType of {path!r}: set mimeType")

    # ---- template files --------------------------------------------------------------
    def template(self, name: str) -> _Template | Callable[[_Edge], Problem]:
        """The template file ``name``, read once; or how an edge to it fails."""
        got = self._files.get(name)
        if got is not None:
            return got
        try:
            text = decode(name, self.source.read(name))
        except Refused as exc:
            why = exc.why
            got = lambda e: _at(e, f"template {name!r} is {why}", INCLUDE_OUTSIDE)  # noqa: E731
        except FileNotFoundError:
            hint = did_you_mean(name, self.source.files())
            got = lambda e: _at(e, f"template {name!r} not found in the package{hint}",  # noqa: E731
                                MISSING_INCLUDE)
        except YamlProblem as exc:  # not UTF-8: the problem is the file's, once per reference
            p = exc.problem
            got = lambda e: Problem(p.path, p.line, p.col, p.message, INVALID_YAML)  # noqa: E731
        else:
            got = _Template(text)
            try:
                refs = self.index.references(text)
            except TemplateSyntaxError as exc:
                self.syntax(got.problems, name, (exc.lineno or 1, 1), exc)
            else:
                for ref, lineno in refs:
                    self.reference(got.edges, name, (lineno, 1), ref, got.problems)
        self._files[name] = got
        return got

    def reach(self, edges: list[_Edge]) -> tuple[dict[str, str], list[Problem]]:
        """Every template file ``edges`` reach, and the problems found on the way there."""
        reached: dict[str, str] = {}
        problems: list[Problem] = []
        todo = list(edges)
        while todo:
            edge = todo.pop()
            if edge.name in reached:
                continue
            got = self.template(edge.name)
            if not isinstance(got, _Template):
                problems.append(got(edge))
                continue
            reached[edge.name] = got.text
            problems += got.problems
            todo.extend(got.edges)
        return reached, problems


def _at(edge: _Edge, message: str, code: str) -> Problem:
    line, col = edge.at() if callable(edge.at) else edge.at
    return Problem(edge.origin, line, col, message, code)


def _position_of(file: LoadedFile, loc: Loc) -> Callable[[], tuple[int, int]]:
    return lambda: file.position(loc)


def is_prompt_file(path: str) -> bool:
    """Whether the package-relative ``path`` is a prompt file (what validation reads as one)."""
    return path.startswith(PROMPTS_DIR) and path.endswith(PROMPT_SUFFIX)


def prompt_key(source: Source, path: str) -> PromptKey | None:
    """A prompt file's memo key when its content's name is known before reading it."""
    sha = source.blob_id(path)
    return ("prompt", path, sha) if sha is not None else None


def validate(source: Source, *, memo: FileMemo | None = None,
             index: TemplateIndex | None = None) -> Validated:
    """Validate the package a source holds: the package and every problem, coded."""
    memo = memo if memo is not None else FileMemo()
    index = index if index is not None else TemplateIndex(memo)
    v = _Validator(source, memo, index)
    files = source.files()
    if MANIFEST not in files:
        return Validated(None, [Problem(MANIFEST, 1, 1, "no promptops.yaml in the package folder",
                                        SCHEMA)], False, index)
    # every file but the prompt files seen before, in one call (a no-op for the work tree)
    source.read_ahead([p for p in files
                       if (k := prompt_key(source, p)) is None or memo.prompt(k) is None])
    manifest_file = v.load(MANIFEST)
    manifest = v.validate(Manifest, manifest_file, manifest_file.data) if manifest_file else None

    prompts = _prompts(v, files)
    templates, reached_problems = v.reach([e for p in prompts.values() for e in p.edges])
    problems = sorted(v.problems + reached_problems)

    def package(chosen: list[_Prompt], templates: dict[str, str], files: list[str]) -> Package:
        assert manifest is not None and manifest_file is not None
        return _package(manifest, manifest_file, source, chosen, templates, files)

    if not problems:
        return Validated(package(list(prompts.values()), templates, files), [], True, index)
    # The partial package: the prompt files without a problem, if what they reach is sound.
    broken = {p.path for p in problems if p.path.startswith(PROMPTS_DIR)}
    if manifest is None or not broken or any(p.path == MANIFEST for p in problems):
        return Validated(None, problems, False, index)
    sound = [p for p in prompts.values() if p.prompt.path not in broken]
    templates, more = v.reach([e for p in sound for e in p.edges])
    partial = None if more else package(sound, templates, [f for f in files if f not in broken])
    return Validated(partial, problems, False, index)


@dataclass(frozen=True)
class Some:
    """Some prompt files and templates validated on their own, with nothing wrong in them
    or in what they reach (serve's incremental rebuild, :mod:`promptops.pipeline.rebuild`)."""

    prompts: dict[str, PromptDef]  # by path
    refs: dict[str, frozenset[str]]  # prompt or template path -> the templates it names
    resources: dict[str, dict[str, bytes]]  # prompt path -> the files its messages name
    templates: dict[str, str]  # every template the roots reach, themselves included


def validate_some(source: Source, prompts: list[str], templates: list[str], *,
                  memo: FileMemo, index: TemplateIndex) -> Some | None:
    """``prompts`` (prompt files) and ``templates`` validated as :func:`validate` would,
    without the rest of the package; None when any of them, or anything they reach, has a
    problem (a full validation then says what, positioned, as a build must). Two of them
    with one name is a problem too; a clash with the other prompts is the caller's to see.
    """
    v = _Validator(source, memo, index)
    found = _prompts(v, prompts)
    roots = [e for p in found.values() for e in p.edges]
    roots += [_Edge(t, t, (1, 1)) for t in templates]
    reached, problems = v.reach(roots)
    if v.problems or problems or any(not isinstance(v._files.get(t), _Template)
                                     for t in templates):
        return None
    refs = {p.prompt.path: frozenset(e.name for e in p.edges) for p in found.values()}
    for name, got in v._files.items():
        if isinstance(got, _Template):
            refs[name] = frozenset(e.name for e in got.edges)
    return Some({p.prompt.path: p.prompt for p in found.values()}, refs,
                {p.prompt.path: p.resources for p in found.values()}, reached)


def _prompts(v: _Validator, files: list[str]) -> dict[str, _Prompt]:
    """Every prompt file that validates, by prompt name (a duplicate name is a problem)."""
    prompts: dict[str, _Prompt] = {}
    paths = [p for p in files if is_prompt_file(p)]
    unseen = lambda p: (k := prompt_key(v.source, p)) is None or v.memo.prompt(k) is None  # noqa: E731
    for path in (p for chunk in prefetch.chunks(v.source, paths, v.memo, v.index, unseen, _warm)
                 for p in chunk):
        got = v.prompt_file(path)
        if got is None or got[1] is None:
            continue
        loaded, spec = got[0], got[1]
        name = spec.name or path.rsplit("/", 1)[-1].removesuffix(PROMPT_SUFFIX)
        if spec.name is None and re.match(PROMPT_NAME_RE, name) is None:
            v.problem(path, (1, 1),
                      f"file name gives prompt name {name!r}, which is not valid; set `name:`")
            continue
        if name in prompts:
            pos = loaded.position(("name",)) if spec.name else (1, 1)
            v.problem(path, pos, f"prompt name {name!r} is already used by "
                      f"{prompts[name].prompt.path}", DUPLICATE_NAME)
            continue
        found = prompts[name] = _Prompt(PromptDef(name=name, path=path, spec=spec, file=loaded))
        v.messages(found)
    return prompts


def _warm(source: Source, paths: list[str], memo: FileMemo, index: TemplateIndex) -> None:
    """Prompt files validated into ``memo`` as :func:`_prompts` reads them (:mod:`.prefetch`)."""
    v = _Validator(source, memo, index)
    for spec in (got[1] for got in map(v.prompt_file, paths) if got is not None):
        texts = [] if spec is None else [s for m in spec.messages for _, s in template_fields(m)]
        for text in texts + [d for d in [spec and spec.resultDescription] if isinstance(d, str)]:
            with suppress(TemplateSyntaxError):
                index.references(text)


def _package(manifest: Manifest, manifest_file: LoadedFile, source: Source,
             chosen: list[_Prompt], templates: dict[str, str], files: list[str]) -> Package:
    resources = {k: v for p in chosen for k, v in p.resources.items()}
    return Package(
        manifest=manifest,
        manifest_file=manifest_file,
        prompts=tuple(sorted((p.prompt for p in chosen), key=lambda p: p.name)),
        templates=dict(sorted(templates.items())),
        resources=dict(sorted(resources.items())),
        origin=source.origin,
        files=tuple(files),
    )


def load_package(source: Source, *, memo: FileMemo | None = None) -> Package:
    """The complete package a source holds; PackageError listing every problem."""
    return validate(source, memo=memo).require()
