"""Stage 2: loaded files -> a validated package.

Reads every file a package is made of, reports *all* problems of every file at once
with positions (a user fixing twenty mistakes should not need twenty runs), and
returns a :class:`Package` that every later stage reads instead of touching files:
bundle, lint, test and diff all start here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from jinja2 import TemplateSyntaxError, nodes
from pydantic import ValidationError

from promptops.errors import PackageError, Problem
from promptops.loader import LoadedFile, Loc, YamlProblem, decode, load_yaml
from promptops.mediatypes import TEXT_FALLBACK, guess_type
from promptops.model import (
    PROMPT_NAME_RE,
    Manifest,
    Message,
    PromptFile,
)
from promptops.schema_messages import schema_problem
from promptops.sources import MANIFEST, Origin, Refused, Source, inside
from promptops.template_limits import guard, parse
from promptops.templating import environment

PROMPT_SUFFIX = ".prompt.yaml"
# A position, or how to compute it: positions need a slow round-trip parse, so they are
# worked out only for problems that are actually reported.
Where = tuple[int, int] | Callable[[], tuple[int, int]]
PROMPTS_DIR = "prompts/"
_parser = guard(environment({}))


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


def template_references(ast: nodes.Template) -> list[tuple[str | None, int]]:
    """Names reached by include/import/extends with their line; None for dynamic ones."""
    refs: list[tuple[str | None, int]] = []
    for node in ast.find_all((nodes.Include, nodes.Import, nodes.FromImport, nodes.Extends)):
        target = node.template  # type: ignore[attr-defined]  # all four node types have it
        name = (
            target.value
            if isinstance(target, nodes.Const) and isinstance(target.value, str)
            else None
        )
        refs.append((name, node.lineno))
    return refs


class _Loader:
    def __init__(self, source: Source) -> None:
        self.source = source
        self.problems: list[Problem] = []
        self.templates: dict[str, str] = {}
        self.resources: dict[str, bytes] = {}
        self._pending: list[tuple[str, str, Where]] = []  # (template, from file, where)

    def problem(self, path: str, pos: Where, message: str) -> None:
        line, col = pos() if callable(pos) else pos
        self.problems.append(Problem(path, line, col, message))

    def prompt_file(self, path: str) -> tuple[LoadedFile, PromptFile | None] | None:
        """A prompt file, loaded and validated; memoised by content for rebuilds.

        From git the content's name (the blob id) is known before reading it, so a file
        seen before is not even read; from the working tree the bytes are the key.
        """
        key = _prompt_key(self.source, path)
        hit = _memo_get(key) if key is not None else None
        if hit is not None:
            return hit  # type: ignore[no-any-return]
        try:
            raw = self.source.read(path)
        except FileNotFoundError as exc:
            self._unreadable(path, exc)
            return None
        key = key or ("prompt", path, raw)
        hit = _memo_get(key)
        if hit is not None:
            return hit  # type: ignore[no-any-return]
        loaded = self.load(path, raw)
        if loaded is None:
            return None
        spec: PromptFile | None = self.validate(PromptFile, loaded, loaded.data)
        if spec is not None:
            if not _KEEP_YAML:
                loaded.shed()
            _memo_put(key, (loaded, spec))
        return loaded, spec

    def load(self, path: str, raw: bytes | None = None) -> LoadedFile | None:
        try:
            return load_yaml(path, self.source.read(path) if raw is None else raw)
        except YamlProblem as exc:
            self.problems.append(exc.problem)
        except FileNotFoundError as exc:
            self._unreadable(path, exc)
        return None

    def _unreadable(self, path: str, exc: FileNotFoundError) -> None:
        why = f"this file is {exc.why}" if isinstance(exc, Refused) else "file not found"
        self.problem(path, (1, 1), why)

    def validate(self, model: Any, file: LoadedFile, data: Any) -> Any:
        if not isinstance(data, dict):
            self.problem(file.path, (1, 1), "expected a YAML mapping at the top of the file")
            return None
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            for err in exc.errors():
                self._schema_problem(model, file, err)
        return None

    def _schema_problem(self, model: Any, file: LoadedFile, err: Any) -> None:
        pos, message = schema_problem(model, file, err)
        self.problem(file.path, pos, message)

    def check_template(self, file: LoadedFile, loc: Loc, source: str) -> None:
        try:
            refs = _references(source)
        except TemplateSyntaxError as exc:
            line, col, _ = file.block_start(loc)
            self.problem(file.path, (line + (exc.lineno or 1) - 1, col), f"template: {exc.message}")
            return
        for name, lineno in refs:
            # Positions cost a round-trip YAML parse: computed only if a problem is reported.
            def at(lineno: int = lineno) -> tuple[int, int]:
                line, col, block = file.block_start(loc)
                return (line + lineno - 1, col) if block or lineno > 1 else (line, col)

            self._reference(file.path, at, name)

    def _reference(self, path: str, at: Where, name: str | None) -> None:
        if name is None:
            self.problem(path, at, "dynamic include: name the template with a string literal")
            return
        norm = inside(name)
        if norm is None or norm != name:
            self.problem(path, at, f"include {name!r} is outside the package or not normalised")
            return
        self._pending.append((norm, path, at))

    def resolve_templates(self) -> None:
        while self._pending:
            name, origin, at = self._pending.pop()
            if name in self.templates:
                continue
            try:
                text = decode(name, self.source.read(name))
            except Refused as exc:
                self.problem(origin, at, f"template {name!r} is {exc.why}")
                continue
            except FileNotFoundError:
                self.problem(origin, at, f"template {name!r} not found in the package")
                continue
            except YamlProblem as exc:
                self.problems.append(exc.problem)
                continue
            self.templates[name] = text
            try:
                refs = _references(text)
            except TemplateSyntaxError as exc:
                self.problem(name, (exc.lineno or 1, 1), f"template: {exc.message}")
                continue
            for ref, lineno in refs:
                self._reference(name, (lineno, 1), ref)

    def resource(self, file: LoadedFile, loc: Loc, path: str, media: str | None) -> None:
        norm = inside(path)

        def pos() -> tuple[int, int]:
            return file.position(loc)

        if norm is None:
            self.problem(file.path, pos, f"{path!r} is outside the package")
            return
        try:
            self.resources[norm] = self.source.read(norm)
        except Refused as exc:
            self.problem(file.path, pos, f"file {path!r} is {exc.why}")
            return
        except FileNotFoundError:
            self.problem(file.path, pos, f"file {path!r} not found in the package")
            return
        if media is None and guess_type(norm) is None:
            self.problem(file.path, pos, f"cannot tell the mimeType of {path!r}: set mimeType")


def load_package(source: Source) -> Package:
    """Validate the package a source holds; PackageError lists every problem."""
    ld = _Loader(source)
    files = source.files()
    if MANIFEST not in files:
        raise PackageError([Problem(MANIFEST, 1, 1, "no promptops.yaml in the package folder")])
    read_ahead = getattr(source, "read_ahead", None)
    if read_ahead is not None:  # every file but the prompt files seen before, in one call
        read_ahead([p for p in files if _memo_get(_prompt_key(source, p)) is None])
    manifest_file = ld.load(MANIFEST)
    manifest = ld.validate(Manifest, manifest_file, manifest_file.data) if manifest_file else None

    prompts: dict[str, PromptDef] = {}
    for path in files:
        if not (path.startswith(PROMPTS_DIR) and path.endswith(PROMPT_SUFFIX)):
            continue
        got = ld.prompt_file(path)
        if got is None or got[1] is None:
            continue
        loaded, spec = got[0], got[1]
        name = spec.name or path.rsplit("/", 1)[-1].removesuffix(PROMPT_SUFFIX)
        if spec.name is None and not _valid_name(name):
            ld.problem(
                path,
                (1, 1),
                f"file name gives prompt name {name!r}, which is not valid; set `name:`",
            )
            continue
        if name in prompts:
            pos = loaded.position(("name",)) if spec.name else (1, 1)
            ld.problem(path, pos, f"prompt name {name!r} is already used by {prompts[name].path}")
            continue
        prompts[name] = PromptDef(name=name, path=path, spec=spec, file=loaded)
        _check_messages(ld, loaded, spec)
    ld.resolve_templates()
    if ld.problems or manifest is None or manifest_file is None:
        raise PackageError(ld.problems)
    return Package(
        manifest=manifest,
        manifest_file=manifest_file,
        prompts=tuple(prompts[n] for n in sorted(prompts)),
        templates=dict(sorted(ld.templates.items())),
        resources=dict(sorted(ld.resources.items())),
        origin=source.origin,
        files=tuple(files),
    )


def _valid_name(name: str) -> bool:
    import re

    return re.match(PROMPT_NAME_RE, name) is not None


def _check_messages(ld: _Loader, file: LoadedFile, spec: PromptFile) -> None:
    if isinstance(spec.resultDescription, str):
        ld.check_template(file, ("resultDescription",), spec.resultDescription)
    for i, msg in enumerate(spec.messages):
        base: Loc = ("messages", i)
        for loc, src in template_fields(msg):
            ld.check_template(file, base + loc, src)
        if msg.template is not None:
            ld._reference(file.path, _position_of(file, (*base, "template")), msg.template)
        if msg.resource is not None and msg.resource.file is not None:
            ld.resource(file, (*base, "resource", "file"), msg.resource.file, TEXT_FALLBACK)
        for kind in ("image", "audio"):
            media = getattr(msg, kind)
            if media is not None:
                ld.resource(file, (*base, kind, "file"), media.file, media.mimeType)


def _position_of(file: LoadedFile, loc: Loc) -> Callable[[], tuple[int, int]]:
    return lambda: file.position(loc)


# Rebuilds (serve following git, lint, diff) mostly see files they have seen before:
# per-file results are memoised by content, so a commit that changes one prompt of
# 1,000 re-parses one file. Bounded; cleared wholesale when full.
_MEMO: dict[Any, Any] = {}
_MEMO_MAX = 50_000
_KEEP_YAML = True


def keep_parsed_yaml(keep: bool) -> None:
    """Whether memoised prompt files keep their parsed YAML besides their model.

    Lint reads it (key order); a long-running `serve`, which keeps the memo for fast
    rebuilds and never lints, turns it off: the model already holds the content, and
    dropping the second copy as each file is read lowers the peak as well.
    """
    global _KEEP_YAML
    _KEEP_YAML = keep


def _prompt_key(source: Source, path: str) -> tuple[str, str, Any] | None:
    blob_id = getattr(source, "blob_id", None)
    sha = blob_id(path) if blob_id is not None else None
    return ("prompt", path, sha) if sha is not None else None


def _memo_get(key: Any) -> Any:
    return _MEMO.get(key)


def _memo_put(key: Any, value: Any) -> None:
    if len(_MEMO) >= _MEMO_MAX:
        _MEMO.clear()
    _MEMO[key] = value


def _references(source: str) -> list[tuple[str | None, int]]:
    """The includes of a template source (memoised); TemplateSyntaxError when it is invalid
    or nested past the limits of ``promptops.template_limits``."""
    key = ("refs", source)
    hit = _memo_get(key)
    if hit is None:
        hit = template_references(parse(_parser, source))
        _memo_put(key, hit)
    return hit  # type: ignore[no-any-return]
