"""What rules read: the package (when it validates), the raw files, and template ASTs.

Everything expensive (parsing a template, a round-trip YAML position) is computed once
here and shared, so forty rules cost little more than one.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from functools import cached_property
from typing import TYPE_CHECKING, TypeVar, cast

from jinja2 import TemplateSyntaxError, nodes
from jinja2.lexer import newline_re

from promptops.errors import Problem
from promptops.lint.shaped import Reads, ShapeTables, exact
from promptops.lint.walk import Facts, collect, preorder
from promptops.pipeline.lines import splitlines_line
from promptops.pipeline.source import Source
from promptops.pipeline.templates import tag_free
from promptops.pipeline.textshape import text_shape, texts
from promptops.pipeline.validate import Package, PromptDef, Validated, template_fields
from promptops.pipeline.yamlio.loader import LoadedFile, Loc

if TYPE_CHECKING:
    from promptops.lint.settings import LintSettings
    from promptops.pipeline.bundle_types import Bundle
    from promptops.pipeline.textshape import Scan
    from promptops.sandbox.environment import PromptEnvironment

T = TypeVar("T")

TEXT_SUFFIXES = (".yaml", ".yml", ".j2", ".jinja", ".jinja2", ".md", ".txt")


@dataclass(frozen=True)
class Unit:
    """One template a prompt renders: inline (``loc`` in the prompt file) or a file."""

    prompt: PromptDef
    path: str
    loc: Loc | None
    source: str
    message: int | None
    role: str | None


@dataclass
class Tables:
    """What a context computes once per distinct text, by that text alone: a run on some
    of a package's prompts fills them, and a run on the whole package that is handed them
    computes only the rest (:mod:`promptops.lint.halves`: the other half came from a
    forked child). Plain data, so they pickle; nothing here depends on the package."""

    memo: dict[str, dict[str, object]] = dataclass_field(default_factory=dict)  # ctx.memo
    facts: dict[str, Facts | None] = dataclass_field(default_factory=dict)  # by source
    marks: dict[tuple[str, Loc, str], tuple[int, int, bool]] = dataclass_field(
        default_factory=dict)
    located: dict[tuple[str, Loc | None, int, str], tuple[int, int]] = dataclass_field(
        default_factory=dict)

    def for_rules(self, codes: frozenset[str]) -> Tables:
        """The answers the rules ``codes`` ask for by the kind they name (``PO105``,
        ``PO509-name``, ``PO511 ...``), and every position placed; not the answers of the
        other rules or of the helpers they share (``trailing``, ``suppressions``), nor
        the templates' facts. What a forked half sends the whole run, which runs only
        ``codes`` (:mod:`promptops.lint.halves`): a table is only a shortcut, so what is
        left out is computed again if asked for (a whole run that runs every rule)."""
        return Tables({kind: table for kind, table in self.memo.items()
                       if kind[:5] in codes}, {}, self.marks, self.located)

    def update(self, other: Tables) -> None:
        """Keep ``other``'s answers too (the same text has the same answer in both)."""
        for kind, table in other.memo.items():
            self.memo.setdefault(kind, {}).update(table)
        self.facts.update(other.facts)
        self.marks.update(other.marks)
        self.located.update(other.located)


class LintContext:
    """What the rules read: the source, the validated package and its problems."""

    def __init__(
        self,
        source: Source,
        settings: LintSettings,
        validated: Validated,
        base_bundle: Bundle | None = None,
        tables: Tables | None = None,
    ) -> None:
        self.source = source
        self.settings = settings
        self.package: Package | None = validated.package
        self.complete = validated.complete
        self.problems: list[Problem] = validated.problems
        self.index = validated.index
        self.base_bundle = base_bundle
        self._raw: dict[str, bytes | None] = {}
        self._text: dict[str, str | None] = {}
        tables = tables if tables is not None else Tables()
        self._facts = tables.facts
        self._nodes: dict[int, tuple[nodes.Node, list[nodes.Node]]] = {}
        self._reached: dict[str, list[str]] = {}
        self._tokens: dict[str, list[tuple[int, str, str]]] = {}
        self._pieced: set[object] = set()  # text_shape keys whose output pieces were lexed alike
        self._sources: dict[str, list[tuple[str, Loc | None, str]]] = {}
        self._units: dict[str, list[Unit]] = {}
        self._memo = tables.memo
        self._marks = tables.marks
        self._located = tables.located

    def memo(self, kind: str, text: str, compute: Callable[[str], T]) -> T:
        """``compute(text)``, once per distinct text for each ``kind`` of answer.

        A package repeats text: prompts copied from one another, and the same prompt file in
        many packages of one repository. The build parses a template once per distinct
        text; the rules that scan text (a file's raw lines, a template's output) computed
        their answer again for every file holding it, so on a replicated corpus they cost
        as much as every file's size while validation cost as much as the distinct text's.
        ``compute`` must depend on ``text`` alone (and on what this context holds for every
        text alike: its environment, its settings)."""
        table = self._memo.setdefault(kind, {})
        if text in table:
            return cast(T, table[text])
        found = table[text] = compute(text)
        return found

    @property
    def pkg(self) -> Package:
        """The package, for rules that need one (the engine runs them only with one)."""
        if self.package is None:
            raise RuntimeError("a rule that needs the package ran without one")
        return self.package

    @property
    def base(self) -> Bundle:
        """The base revision's bundle, for the 6xx rules (``NEEDS = "base"``)."""
        if self.base_bundle is None:
            raise RuntimeError("a rule that needs a base bundle ran without one")
        return self.base_bundle

    @cached_property
    def files(self) -> list[str]:
        return self.source.files()

    def raw(self, path: str) -> bytes | None:
        if path not in self._raw:
            try:
                self._raw[path] = self.source.read(path)
            except FileNotFoundError:
                self._raw[path] = None
        return self._raw[path]

    def text(self, path: str) -> str | None:
        if path not in self._text:
            known = self._decoded.get(path)
            if known is not None:
                self._text[path] = known
                return known
            data = self.raw(path)
            try:
                self._text[path] = None if data is None else data.decode("utf-8-sig")
            except UnicodeDecodeError:
                self._text[path] = None
        return self._text[path]

    @cached_property
    def _decoded(self) -> dict[str, str]:
        """The text of every file validation decoded (the same ``utf-8-sig`` decoding), so
        the rules that read every file do not decode 10,000 files a second time."""
        if self.package is None:
            return {}
        out: dict[str, str] = dict(self.package.templates)
        out[self.package.manifest_file.path] = self.package.manifest_file.text
        for prompt in self.package.prompts:
            out[prompt.file.path] = prompt.file.text
        return out

    @cached_property
    def text_files(self) -> list[str]:
        """Files hygiene rules read: package sources, not tests (snapshots are verbatim output)
        nor dot-folders (generated schemas)."""
        return [
            p for p in self.files
            if p.endswith(TEXT_SUFFIXES) and not p.startswith("tests/")
            and not any(s.startswith(".") for s in p.split("/"))
        ]

    @property
    def env(self) -> PromptEnvironment:
        """The sandbox's environment (its filter and test tables)."""
        return self.index.env

    def ast(self, key: str, source: str) -> nodes.Template | None:
        """Parsed once per distinct source text (many prompts share identical text), by
        validation already; None when it does not parse (validation reported why)."""
        return self.index.ast(source)

    def facts(self, key: str, source: str) -> Facts | None:
        """What one walk of the template's AST knows; None when it does not parse. Walked
        once per template shape where texts do not repeat (:mod:`promptops.lint.shaped`)."""
        if source not in self._facts:
            self._facts[source] = self._shapes.facts(self, source, self._walked)
        return self._facts[source]

    def shaped(self, kind: str, source: str, compute: Callable[[nodes.Template | None], T],
               reads: Reads, value: Callable[[object], object] = exact) -> T:
        """``compute(self.ast(source))``, once per template shape and ``value`` of each
        literal ``reads`` gives, for every template of it
        (:meth:`promptops.lint.shaped.ShapeTables.answer` says what ``compute`` may read)."""
        return self._shapes.answer(self, kind, source, compute, reads, value)

    @cached_property
    def _shapes(self) -> ShapeTables:
        return ShapeTables(self.env)

    def _walked(self, source: str) -> Facts | None:
        """The facts of one walk of ``source``'s tree, its node list kept for :meth:`nodes`."""
        ast = self.ast("", source)
        if ast is None:
            return None
        every: list[nodes.Node] = []
        found = collect(ast, every)
        self._nodes.setdefault(id(ast), (ast, every))  # the same walk's node list
        return found

    def literal_shape(self, source: str) -> Scan | None:
        """The shape scan of ``source``, the build's where it parsed it (the shape tables
        key templates by it: :mod:`promptops.lint.shaped`)."""
        return self.index.literal_shape(source)

    def nodes(self, ast: nodes.Node) -> list[nodes.Node]:
        """Every node of a parsed template in source order, walked once for all the rules
        that look at each node (PO510, PO511) and for every prompt including it."""
        found = self._nodes.get(id(ast))
        if found is None or found[0] is not ast:
            found = (ast, preorder(ast))
            self._nodes[id(ast)] = found
        return found[1]

    def tokens(self, source: str) -> list[tuple[int, str, str]]:
        """Jinja's token stream of a source, lexed once per distinct text for every rule that
        judges rendered text (the lexer applies trim_blocks, lstrip_blocks and ``-``/``+``
        exactly as rendering does); empty when it does not lex (PO103 says why). The
        environment's lexer is the sandbox's (promptops.sandbox.lexing): Jinja's tokens
        without its per-character scan of plain text, which made PO504 three quarters of
        the rules' time on 200 KB prompts (issue 26, session 10). A source with no tag is
        not lexed (:func:`text_tokens`)."""
        found = self._tokens.get(source)
        if found is None:
            found = text_tokens(self.env, source)
            if found is None:
                try:
                    found = list(self.env.lex(source))
                except TemplateSyntaxError:
                    found = []
            self._tokens[source] = found
        return found

    def output_pieces(self, source: str) -> list[tuple[int, str, bool]]:
        """(template line where it starts, text, last token?) of each ``data`` token of
        :meth:`tokens`: the literal pieces of output PO504 and PO505 judge.

        From :func:`~promptops.pipeline.textshape.text_shape`'s scan, without the lexer,
        when a source of the same key was lexed before into exactly the pieces the scan
        gives (its texts, each at the line its key holds, the last one last where the key
        ends in text): sources of one key lex alike but for those texts. Real prompts
        copied with another first line (``Copy k of this prompt.``) are one key each
        family; lexing each again after validation was a twentieth of the lint child of
        a diff on them (issue 26, session 20)."""
        scanned = text_shape(self.env, source)
        if scanned is not None and scanned[0] in self._pieced:
            return _pieces(scanned[0], scanned[1])
        tokens = self.tokens(source)
        last = len(tokens) - 1
        found = [(lineno, value, i == last) for i, (lineno, kind, value) in enumerate(tokens)
                 if kind == "data"]
        if scanned is not None and tokens and found == _pieces(scanned[0], scanned[1]):
            self._pieced.add(scanned[0])
        return found

    def sources(self, prompt: PromptDef) -> list[tuple[str, Loc | None, str]]:
        """(path, loc or None, source) of every template a prompt renders, includes too; once
        per prompt for all the rules that ask."""
        found = self._sources.get(prompt.path)
        if found is None:
            found = []
            seen: set[tuple[str, Loc | None]] = set()
            templates = self.package.templates if self.package else {}
            for unit in self.units(prompt):
                items = [(unit.path, unit.loc, unit.source)] + [
                    (p, None, templates[p]) for p in self.reached(unit.path, unit.source)]
                for path, loc, src in items:
                    if (path, loc) not in seen:
                        seen.add((path, loc))
                        found.append((path, loc, src))
            self._sources[prompt.path] = found
        return found

    def units(self, prompt: PromptDef) -> list[Unit]:
        if prompt.path in self._units:  # once per prompt for all the rules that ask
            return self._units[prompt.path]
        out: list[Unit] = self._units.setdefault(prompt.path, [])
        for i, msg in enumerate(prompt.spec.messages):
            for loc, src in template_fields(msg):
                out.append(Unit(prompt, prompt.path, ("messages", i, *loc), src, i, msg.role))
            if msg.template is not None and self.package is not None:
                body = self.package.templates.get(msg.template)
                if body is not None:
                    out.append(Unit(prompt, msg.template, None, body, i, msg.role))
        return out

    def includes(self, path: str, source: str) -> list[tuple[str, int]]:
        """Package templates ``source`` includes directly, with the line of each."""
        return list(self.index.includes(source))

    def reached(self, path: str, source: str) -> list[str]:
        """Every template file reachable from a source through includes, in order."""
        if source not in self._reached:
            templates = self.package.templates if self.package else {}
            self._reached[source] = self.index.reached([source], templates)
        return self._reached[source]

    def locate(self, unit_path: str, loc: Loc | None, lineno: int, needle: str) -> tuple[int, int]:
        """File line and column of ``needle`` on template line ``lineno``.

        Inside a ``text: |`` block, template line n is file line block_start + n - 1; a
        quoted one-line scalar is searched on its own line.
        """
        file = None if loc is None else self.loaded(unit_path)
        if loc is None:
            text = self.text(unit_path) or ""
        elif file is None:
            return 1, 1
        else:
            text = file.text
        # once per distinct file text: placing split the whole file for every finding
        key = (text, loc, lineno, needle)
        found = self._located.get(key)
        if found is None:
            found = self._located[key] = self._place(file, text, loc, lineno, needle)
        return found

    def _place(self, file: LoadedFile | None, text: str, loc: Loc | None, lineno: int,
               needle: str) -> tuple[int, int]:
        """:meth:`locate`'s answer, computed."""
        if loc is None or file is None:
            return lineno, _column(text, lineno, needle, 1)
        line, col, block = self.block_start(file, loc)
        if block:
            line = line + lineno - 1
        return line, _column(text, line, needle, col)

    def block_start(self, file: LoadedFile, loc: Loc) -> tuple[int, int, bool]:
        """``file.block_start(loc)``, once per distinct file text and location: composing a
        file's YAML again for its marks was a fifth of the rules' time on real prompts, and
        files with the same text have the same marks."""
        memo_key = (file.text, loc, "block")
        found = self._marks.get(memo_key)
        if found is None:
            found = self._marks[memo_key] = file.block_start(loc)
        return found

    def position(self, file: LoadedFile, loc: Loc, *, key: bool = False) -> tuple[int, int]:
        """``file.position(loc, key=key)``, once per distinct file text (:meth:`block_start`)."""
        memo_key = (file.text, loc, "key" if key else "value")
        found = self._marks.get(memo_key)
        if found is None:
            line, col = file.position(loc, key=key)
            found = self._marks[memo_key] = (line, col, False)
        return found[0], found[1]

    def loaded(self, path: str) -> LoadedFile | None:
        if self.package is None:
            return None
        if path == "promptops.yaml":
            return self.package.manifest_file
        return self._loaded.get(path)

    @cached_property
    def _loaded(self) -> dict[str, LoadedFile]:
        """Prompt file path -> its loaded file: placing a finding looked it up by a scan of
        every prompt, so placing them all grew with findings times prompts."""
        out: dict[str, LoadedFile] = {}
        for p in self.package.prompts if self.package is not None else ():
            out.setdefault(p.path, p.file)
        return out


def _column(text: str, line: int, needle: str, default: int) -> int:
    src = splitlines_line(text, line - 1) if needle else None
    if src is None:
        return default
    pattern = re.escape(needle)
    if needle[:1].isidentifier():
        pattern = r"(?<![\w.])" + pattern + r"\b"
    found = re.search(pattern, src[max(default - 1, 0):])
    if found is None:
        found = re.search(pattern, src)
        return found.start() + 1 if found else default
    return found.start() + max(default - 1, 0) + 1


def _pieces(key: tuple[object, ...], values: list[str]) -> list[tuple[int, str, bool]]:
    """The texts of a :func:`~promptops.pipeline.textshape.text_shape` key and values, as
    :meth:`LintContext.output_pieces` gives them (the last one last where the key ends in
    text)."""
    out = [(line, text, False) for line, text in texts(key, values)]
    if out and isinstance(key[-1], int):
        out[-1] = (out[-1][0], out[-1][1], True)
    return out


def text_tokens(env: PromptEnvironment, source: str) -> list[tuple[int, str, str]] | None:
    """``list(env.lex(source))`` for a source without a tag (:func:`tag_free`), without
    the lexer; None for any other source. Jinja's ``tokeniter`` joins the source's lines
    again with ``\\n`` (``\\r\\n`` and ``\\r`` become ``\\n``; the last line end dropped
    unless ``keep_trailing_newline``), and where no tag starts, its text rule cannot match
    and the rest (``.+``, every character) is one ``data`` token on line 1, or none for an
    empty text. Only for the sandbox's syntax, Jinja's default (no line statements or
    comments, tags starting with ``{``): :func:`tag_free` reads that syntax. Where no text
    repeats, lexing a tag-free template's 200 KB again after validation was a tenth of
    PO504 (issue 26, session 16; ``tests/lint/test_speed_equivalence.py`` holds it equal to
    the lexer's tokens)."""
    if (not tag_free(source) or env.line_statement_prefix is not None
            or env.line_comment_prefix is not None
            or (env.block_start_string, env.variable_start_string,
                env.comment_start_string) != ("{%", "{{", "{#")):
        return None
    text = source if "\r" not in source else newline_re.sub("\n", source)
    if not env.keep_trailing_newline and text.endswith("\n"):
        text = text[:-1]
    return [(1, "data", text)] if text else []
