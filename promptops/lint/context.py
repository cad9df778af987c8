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

from promptops.errors import Problem
from promptops.pipeline.source import Source
from promptops.pipeline.validate import Package, PromptDef, Validated, template_fields
from promptops.pipeline.yamlio.loader import LoadedFile, Loc

if TYPE_CHECKING:
    from promptops.lint.settings import LintSettings
    from promptops.pipeline.bundle_types import Bundle
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


@dataclass(frozen=True)
class Facts:
    """Everything the rules ask of a template, gathered in one walk of its AST."""

    loads: tuple[tuple[str, int], ...]  # variables read, with their line
    stores: frozenset[str]  # names the template binds itself (set, for, macro params)
    calls: tuple[tuple[str, str, int], ...]  # ("filter" | "test", name, line)
    printed: frozenset[str]  # names that appear inside {{ ... }}
    silent: bool  # prints nothing whatever the arguments (no output, no include)


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

    def update(self, other: Tables) -> None:
        """Keep ``other``'s answers too (the same text has the same answer in both)."""
        for kind, table in other.memo.items():
            self.memo.setdefault(kind, {}).update(table)
        self.facts.update(other.facts)
        self.marks.update(other.marks)
        self.located.update(other.located)


def children(node: nodes.Node) -> list[nodes.Node]:
    """``list(node.iter_child_nodes())``, in the same order, without its two generators per
    node: walking the ASTs was the largest cost of lint after validation on long, branchy
    templates (issue 26), and most of it was Jinja's generic field iteration. No generator
    of its own either (one per list field was a fifth of the walk where no text repeats)."""
    out: list[nodes.Node] = []
    node_type = nodes.Node
    for field in node.fields:
        try:
            item = getattr(node, field)
        except AttributeError:
            continue
        if isinstance(item, list):
            for n in item:
                if isinstance(n, node_type):
                    out.append(n)
        elif isinstance(item, node_type):
            out.append(item)
    return out


def preorder(ast: nodes.Node) -> list[nodes.Node]:
    """Every node of ``ast`` in source order (``ast`` first), iteratively (deep nesting)."""
    out: list[nodes.Node] = []
    stack = [ast]
    while stack:
        node = stack.pop()
        out.append(node)
        kids = children(node)
        kids.reverse()
        stack.extend(kids)
    return out


def _args_key(node: nodes.Getitem) -> str | None:
    """``"reference-file"`` for ``args["reference-file"]`` (a name that is no identifier)."""
    if isinstance(node.node, nodes.Name) and node.node.name == "args" \
            and isinstance(node.arg, nodes.Const) and isinstance(node.arg.value, str):
        return node.arg.value
    return None


def _bound(node: nodes.Node) -> list[str]:
    """The names an import binds: ``{% import "m.j2" as m %}`` binds ``m``, ``{% from "m.j2"
    import a as b, c %}`` binds ``b`` and ``c`` (PO201 must not call them undeclared)."""
    if isinstance(node, nodes.Import):
        return [node.target]
    if isinstance(node, nodes.FromImport):
        return [n if isinstance(n, str) else n[1] for n in node.names]
    return []


# What :func:`_collect` does with a node, by the first class of this chain it is an instance
# of (a branch whose extra condition fails falls through to the next, as an if/elif chain
# does). Decided once per node class (``_kinds``), not by six isinstance tests per node:
# on long templates where no text repeats the walk was half of the rules' time.
_NAME, _ARGS_ITEM, _CALL, _OUTPUT, _PARAMS, _LINK = range(6)
_CHAIN: tuple[tuple[int, type | tuple[type, ...]], ...] = (
    (_NAME, nodes.Name), (_ARGS_ITEM, nodes.Getitem), (_CALL, (nodes.Filter, nodes.Test)),
    (_OUTPUT, nodes.Output), (_PARAMS, (nodes.Macro, nodes.CallBlock)),
    (_LINK, (nodes.Include, nodes.Import, nodes.FromImport, nodes.Extends)))


def _kinds(cls: type) -> tuple[tuple[int, ...], bool]:
    """(the branches of the chain a node of ``cls`` matches, in order; is it an Output?)."""
    found = _KINDS.get(cls)
    if found is None:  # a node class Jinja did not define at import (none today)
        found = (tuple(k for k, c in _CHAIN if issubclass(cls, c)), issubclass(cls, nodes.Output))
    return found


def _node_classes(cls: type = nodes.Node) -> list[type]:
    subclasses: list[type] = cls.__subclasses__()
    return [cls, *(c for sub in subclasses for c in _node_classes(sub))]


# Made once at import for every node class Jinja defines: a table, not a cache written at
# run time (tests/test_no_global_state.py).
_KINDS: dict[type, tuple[tuple[int, ...], bool]] = {
    cls: (tuple(k for k, c in _CHAIN if issubclass(cls, c)), issubclass(cls, nodes.Output))
    for cls in _node_classes()}


def _collect(ast: nodes.Template, every: list[nodes.Node] | None = None) -> Facts:
    """The template's facts, in one walk; ``every`` (when given) receives every node in
    source order as :func:`preorder` gives them, so :meth:`LintContext.nodes` need not walk
    the same tree again."""
    loads: list[tuple[str, int]] = []
    stores: set[str] = set()
    calls: list[tuple[str, str, int]] = []
    printed: set[str] = set()
    silent = True
    seen = every if every is not None else []
    # (node, inside an output?, hidden?): a hidden node is walked for ``every`` only (the
    # ``args`` of ``args["name"]``, which the facts read through the subscript)
    stack: list[tuple[nodes.Node, bool, bool]] = [(ast, False, False)]
    while stack:
        node, in_output, hidden = stack.pop()
        seen.append(node)
        kids = children(node)
        kids.reverse()
        if hidden:
            stack.extend([(child, in_output, True) for child in kids])
            continue
        branches, is_output = _kinds(type(node))
        pushed = False
        for branch in branches:  # most nodes match none
            if branch == _NAME:
                name = cast(nodes.Name, node)
                if name.ctx == "load":
                    loads.append((name.name, name.lineno))
                    if in_output:
                        printed.add(name.name)
                else:
                    stores.add(name.name)
            elif branch == _ARGS_ITEM:
                if (key := _args_key(cast(nodes.Getitem, node))) is None:
                    continue
                loads.append((key, node.lineno))  # args["reference-file"] reads that one
                if in_output:
                    printed.add(key)
                loads.append(("args", node.lineno))
                arg = cast(nodes.Getitem, node).arg
                stack.extend([(child, in_output, child is not arg) for child in kids])
                pushed = True
            elif branch == _CALL:
                called = cast(nodes.Filter, node)
                if not called.name:
                    continue
                calls.append(("filter" if isinstance(node, nodes.Filter) else "test",
                              called.name, node.lineno))
            elif branch == _OUTPUT:
                silent = silent and all(isinstance(n, nodes.TemplateData) and not n.data.strip()
                                        for n in cast(nodes.Output, node).nodes)
            elif branch == _PARAMS:
                stores.update(a.name for a in cast(nodes.Macro, node).args)
            else:  # _LINK
                silent = False  # what it includes is the include graph's (TemplateIndex)
                stores.update(_bound(node))
            break
        if not pushed:
            stack.extend([(child, in_output or is_output, False) for child in kids])
    loads.sort(key=lambda x: x[1])
    return Facts(tuple(loads), frozenset(stores), tuple(calls), frozenset(printed), silent)


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
        """What one walk of the template's AST knows; None when it does not parse."""
        if source not in self._facts:
            ast = self.ast(key, source)
            if ast is None:
                self._facts[source] = None
            else:
                every: list[nodes.Node] = []
                self._facts[source] = _collect(ast, every)
                self._nodes.setdefault(id(ast), (ast, every))  # the same walk's node list
        return self._facts[source]

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
        the rules' time on 200 KB prompts (issue 26, session 10)."""
        found = self._tokens.get(source)
        if found is None:
            try:
                found = list(self.env.lex(source))
            except TemplateSyntaxError:
                found = []
            self._tokens[source] = found
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
    lines = text.splitlines()
    if not needle or not 0 < line <= len(lines):
        return default
    src = lines[line - 1]
    pattern = re.escape(needle)
    if needle[:1].isidentifier():
        pattern = r"(?<![\w.])" + pattern + r"\b"
    found = re.search(pattern, src[max(default - 1, 0):])
    if found is None:
        found = re.search(pattern, src)
        return found.start() + 1 if found else default
    return found.start() + max(default - 1, 0) + 1
