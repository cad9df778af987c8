"""The include graph, computed once: which templates a template reaches, and its AST.

Validation asks which files a prompt's templates include (to load them and report the
missing ones), lint asks for the ASTs to inspect and for every partial a prompt reaches,
and the diff engine asks which partials a prompt's served text depends on. They used to
ask three parsers with three normalisations; a :class:`TemplateIndex` is now the one
parser (the sandbox's environment, so its nesting limits hold) and the one walk.

An index is owned by whoever builds: a :class:`~promptops.pipeline.build.Build` makes one
and hands it to lint with the validated package, so lint inspects the ASTs validation
parsed instead of parsing every template twice. Whether it keeps ASTs is the owner's
choice (lint wants them; a build that only serves does not need the memory).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import cached_property
from typing import TYPE_CHECKING

from jinja2 import TemplateSyntaxError, nodes

from promptops.pipeline.astshapes import AstShapes
from promptops.pipeline.memo import FileMemo, Ref
from promptops.pipeline.source import inside
from promptops.sandbox.nesting import parse

if TYPE_CHECKING:
    from promptops.pipeline.textshape import Scan
    from promptops.sandbox.environment import PromptEnvironment

_REFERENCES = (nodes.Include, nodes.Import, nodes.FromImport, nodes.Extends)
_TAGS = ("{{", "{%", "{#")  # how every Jinja tag of the sandbox's syntax starts
_TAG = re.compile(r"\{[{%#]")  # any of _TAGS: a "{", then a tag's second character
_REFERRING = ("include", "import", "extends")  # the tag names of _REFERENCES (`from` imports)


def tag_free(source: str) -> bool:
    """No Jinja tag in ``source``: its lexer yields only text, so it parses, and into one
    output of that text (nothing to include, nothing to refuse). The sandbox's syntax is
    Jinja's default (``promptops.sandbox.lexing`` relies on it too). One scan for a ``{``
    followed by a tag's second character, not one substring search per tag: a source with
    a tag but no ``{{`` was read three times, and where no text repeats these scans over
    every template were a tenth of lint's PO504 (issue 26, session 18;
    ``tests/lint/test_speed_equivalence_scans.py`` holds the two equal)."""
    return _TAG.search(source) is None


def references_in(ast: nodes.Template) -> tuple[Ref, ...]:
    """Names reached by include/import/extends with their line; None for dynamic ones."""
    refs: list[Ref] = []
    for node in ast.find_all(_REFERENCES):
        target = node.template  # type: ignore[attr-defined]  # all four node types have it
        name = (target.value if isinstance(target, nodes.Const) and isinstance(target.value, str)
                else None)
        refs.append((name, node.lineno))
    return tuple(refs)


class TemplateIndex:
    """Parses template sources once and answers what each includes."""

    def __init__(self, memo: FileMemo | None = None, *, keep_asts: bool = False,
                 one_core: bool = False) -> None:
        self.memo = memo if memo is not None else FileMemo()
        self.keep_asts = keep_asts
        # a validation with this index forks no child (it runs in one already: a
        # forked half of review/warm.py, which sends back references, not trees)
        self.one_core = one_core
        self._asts: dict[str, nodes.Template | None] = {}
        self._includes: dict[str, tuple[tuple[str, int], ...]] = {}
        # one parse per template shape (pipeline/astshapes.py); the shape scans kept for
        # lint where the trees are
        self._shapes = AstShapes(keep_scans=keep_asts)

    @cached_property
    def env(self) -> PromptEnvironment:
        """The sandbox's environment, for parsing and for its filter and test tables."""
        from promptops.sandbox.environment import environment

        return environment({}, whitespace="jinja")  # parsing only: the rewrite keeps lines

    def parse(self, source: str) -> nodes.Template:
        """The AST of ``source``; TemplateSyntaxError when it is invalid or nested past the
        limits of :mod:`promptops.sandbox.nesting`."""
        if source in self._asts:
            ast = self._asts[source]
            if ast is None:
                return parse(self.env, source)  # raises again, positioned
            return ast
        try:
            ast = self._shapes.parse(self.env, source)
        except TemplateSyntaxError:
            if self.keep_asts:
                self._asts[source] = None
            raise
        if self.keep_asts:
            self._asts[source] = ast
        return ast

    def literal_shape(self, source: str) -> Scan | None:
        """:func:`~promptops.pipeline.textshape.literal_shape` of ``source`` preprocessed,
        as this index's parse scanned it (:meth:`AstShapes.scan`); raises what the
        preprocessing raises."""
        return self._shapes.scan(self.env, source)

    def written_scans(self) -> Mapping[str, Scan | None]:
        """The scans :meth:`literal_shape` and the parses kept, by source as written
        (:meth:`AstShapes.written_scans`): for a review's render workers, forked after
        the build, whose layouts scan the same texts
        (:func:`~promptops.pipeline.textshape.kept_shape`)."""
        return self._shapes.written_scans()

    def kept(self) -> dict[str, nodes.Template | None]:
        """The ASTs kept (None: the source does not parse), by source: what a forked lint
        child hands back (:mod:`promptops.lint.halves`)."""
        return self._asts

    def keep(self, asts: Mapping[str, nodes.Template | None]) -> None:
        """Keep ``asts`` (another index's :meth:`kept`, parsed by this index's environment
        settings) as if this index had parsed them; only when it keeps ASTs."""
        if self.keep_asts:
            self._asts.update(asts)

    def ast(self, source: str) -> nodes.Template | None:
        """:meth:`parse`, or None when the source does not parse (validation said why)."""
        try:
            return self.parse(source)
        except TemplateSyntaxError:
            return None

    def references(self, source: str) -> tuple[Ref, ...]:
        """Every include, import and extends of ``source``, as written, with its line;
        TemplateSyntaxError when the source does not parse (validation reports it)."""
        found = self.memo.references(source)
        if found is None and not self.keep_asts and not tag_free(source):
            # no tree kept: a layout known makes none (pipeline/astshapes.py)
            found = self._shapes.known_references(self.env, source, references_in)
            if found is not None:
                self.memo.keep_references(source, found)
        if found is None:
            if self.keep_asts or not tag_free(source):
                ast = self.parse(source)  # TemplateSyntaxError here, or the AST is kept
                # a node of _REFERENCES comes from a tag that names it
                found = ()
                if any(w in source for w in _REFERRING):  # from its shape, else walked
                    found = self._shapes.references(ast, references_in)
                    if found is None:
                        found = references_in(ast)
            else:
                found = ()  # text only: parsing it could neither fail nor find anything
            self.memo.keep_references(source, found)
        return found

    def includes(self, source: str) -> tuple[tuple[str, int], ...]:
        """The package templates ``source`` names, normalised, with their line: what a
        render can actually reach (dynamic names, and names that leave the package, are
        validation problems and reach nothing). Empty when the source does not parse."""
        found = self._includes.get(source)
        if found is None:
            # the parse's references when it kept them (a source without "{%" has none):
            # scanning a 170 KB source for "{%" again cost more than the lookup
            refs = self.memo.references(source)
            if refs is None:
                refs = ()
                if "{%" in source:  # include, import and extends are all statements
                    try:
                        refs = self.references(source)
                    except TemplateSyntaxError:
                        refs = ()
            found = tuple((norm, line) for name, line in refs
                          if name is not None and (norm := inside(name)) is not None)
            self._includes[source] = found
        return found

    def reached(self, sources: Iterable[str], templates: Mapping[str, str]) -> list[str]:
        """Every template of ``templates`` that ``sources`` reach through includes,
        transitively, nearest first."""
        seen: list[str] = []
        known: set[str] = set()
        todo = [name for source in sources for name, _ in self.includes(source)]
        while todo:
            name = todo.pop(0)
            if name in known or name not in templates:
                continue
            known.add(name)
            seen.append(name)
            todo.extend(n for n, _ in self.includes(templates[name]))
        return seen
