"""What the rules ask of a template's tree, once per template *shape*, not once per text.

The rules that walk trees (PO104's and PO201's facts, PO207, PO510, PO511) keep their
answers by text (:meth:`~promptops.lint.context.LintContext.memo`), which pays where texts
repeat. Where they do not (5,000 generated prompts that differ only in their words, a
corpus whose copies each start with a line of their own), each text was walked once per
rule: on ``benchmarks/diff_shapes.py``'s ``deep`` shape those walks were most of the
review's lint child, the longest process of ``diff`` (issue 26, session 17).

A template's shape is :func:`promptops.pipeline.textshape.literal_shape`'s key (the one
home of that concept, by which validation shares parse trees since session 12, literals
since session 18; lint since session 20, :func:`~promptops.pipeline.textshape.text_shape`
before, whose key holds the literals): two sources with one key lex into one token stream
but for its *values*, which are each text between tags, each plain template name, and
each string and number literal inside a tag. Jinja's parser does not look into a text
but in one place (a ``{% block ... required %}`` must hold only whitespace), nor into a
literal, so the trees of one key differ only in the values at the marked places. What
the rules read of a tree is then a function of:

* the key (every tag, written out but for its literals, and the line it starts on; a
  string literal keeps its line breaks there, since they move what follows it),
* the names (``{% include "partials/q7.j2" %}``), exactly, but only where an answer
  reads a ``Const`` that is no literal (no rule does today: an include's name is read
  by the include graph, not by these answers),
* the literals an answer *reads*, exactly or by what it makes of them (``value``): the
  rule names the ``Const`` nodes it may read by where they are in a tree (``reads``,
  never by their values), and which of the source's literals each is, is read once per
  shape off a tree parsed with a numbered marker in place of each literal
  (:func:`~promptops.pipeline.astshapes.literal_marked`; not shared where a marker
  lands anywhere but alone in one ``Const``, as ``"a" "b"`` joins two), and
* of the texts, only whether each is blank (a template whose every output is blank text
  prints nothing: ``Facts.silent``, PO406).

So a template's *facts key*, for an answer, is its shape's number, the names it reads
and what it reads of the literals; the texts among the values are told apart once per
shape, by the shape's first tree (its ``TemplateData`` nodes, in order, must sit at
exactly one set of places among the values: :func:`_texts`). An answer is computed from
a tree (as before) for the first template of a facts key and again for the second, and
shared from the third on only when the two agree (as
:class:`~promptops.pipeline.astshapes.AstShapes` shares a tree only once a second
template's parse agrees); a shape whose first tree does not parse, holds a required
block or whose texts cannot be placed is not shared at all. Every template of a shape
not shared, and every source ``literal_shape`` declines, is answered from its own tree,
as before.

The tables are per context and never pickled: a forked half's answers reach the whole run
by text, in :class:`~promptops.lint.context.Tables`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Protocol, TypeVar, cast

from jinja2 import nodes

from promptops.lint.walk import preorder
from promptops.pipeline.astshapes import MARK, literal_marked

if TYPE_CHECKING:
    from jinja2 import Environment

    from promptops.lint.walk import Facts
    from promptops.pipeline.textshape import Scan

T = TypeVar("T")
S = TypeVar("S")

# a template's facts key: its shape's number, its values that are not texts, and what an
# answer reads of its literals
Key = tuple[int, tuple[str, ...], tuple[object, ...]]
_PENDING, _AGREED, _SPLIT = range(3)  # an answer seen once, confirmed by a second, refused
# The longest template keyed, in characters: the key is a scan of every character, a walk
# costs by the tree's nodes, and long prompts are mostly text (on speed2's 20-200 KB
# templates the scans cost 2-5 times the walks they could save; below 10 KB they cost half).
SMALL = 8192
_LINKS = (nodes.Include, nodes.Import, nodes.FromImport, nodes.Extends)

Reads = Callable[[list[nodes.Node]], Iterable[nodes.Node]]


def exact(value: object) -> object:
    """What an answer keeps of a literal it reads by default: the value itself."""
    return value


def _args_items(every: list[nodes.Node]) -> Iterator[nodes.Node]:
    """The facts read one literal: the key of ``args["name"]`` (walk.py's ``_args_key``)."""
    for node in every:
        if isinstance(node, nodes.Getitem) and isinstance(node.node, nodes.Name) \
                and node.node.name == "args":
            yield node.arg


class Trees(Protocol):
    """Where the trees come from (the lint context), handed to every call rather than
    kept: a context holding tables that held it was a cycle, left to the collector with
    every tree and table it reached (+10% of lint's CPU where texts repeat)."""

    def ast(self, key: str, source: str) -> nodes.Template | None: ...

    def nodes(self, ast: nodes.Node) -> list[nodes.Node]: ...

    def literal_shape(self, source: str) -> Scan | None: ...


# a source's shape: (the shape's number, its values that are not texts, its literals,
# does it print nothing?)
_Keyed = tuple[int, tuple[str, ...], tuple[object, ...], bool]


class ShapeTables:
    """One context's answers by facts key (the module docstring says what that is)."""

    def __init__(self, env: Environment) -> None:
        self._env = env
        self._numbers: dict[object, int] = {}  # literal_shape key -> the shape's number
        # the shape's number -> (the places of its texts among the values, does it print
        # something whatever its texts?); None: not shared
        self._layouts: dict[int, tuple[frozenset[int], bool] | None] = {}
        self._keys: dict[str, _Keyed | None] = {}  # by source
        # the shape's number -> each node's literal (its place), in tree order; None: the
        # literals cannot be placed (an answer that reads one is not shared)
        self._places: dict[int, list[int | None] | None] = {}
        # (kind, the shape's number) -> the places of the literals the answer reads
        self._reads: dict[tuple[str, int], tuple[tuple[int, ...], bool] | None] = {}
        self._answers: dict[tuple[str, Key], tuple[object, int]] = {}

    def facts(self, trees: Trees, source: str,
              walk: Callable[[str], Facts | None]) -> Facts | None:
        """``walk(source)`` (the facts of one walk of its tree), shared by the templates of
        a facts key, with ``silent`` the template's own (its texts' blankness, which the
        first two templates' walks must agree with too)."""
        keyed = self._key(trees, source)
        key = None if keyed is None else self._slot(trees, "facts", source, keyed,
                                                    _args_items, exact)
        if keyed is None or key is None:
            return walk(source)
        silent = keyed[3]
        slot = ("facts", key)
        known = self._answers.get(slot)
        if known is not None and known[1] == _AGREED:
            shared = cast("Facts", known[0])  # kept with silent False
            if not silent:
                return shared
            quiet = self._answers.get(("facts-silent", key))
            if quiet is None:
                quiet = self._answers[("facts-silent", key)] = (replace(shared, silent=True),
                                                                _AGREED)
            return cast("Facts", quiet[0])
        mine = walk(source)
        plain = replace(mine, silent=False) if mine is not None and mine.silent else mine
        if mine is None or mine.silent != silent:
            self._answers[slot] = (None, _SPLIT)
        elif known is None:
            self._answers[slot] = (plain, _PENDING)
        elif known[1] == _PENDING:
            self._answers[slot] = (known[0], _AGREED) if known[0] == plain else (None, _SPLIT)
        return mine

    def answer(self, trees: Trees, kind: str, source: str,
               compute: Callable[[nodes.Template | None], T], reads: Reads,
               value: Callable[[object], object] = exact) -> T:
        """``compute(tree of source)``, once per facts key and ``kind`` (which must name
        every input of ``compute`` but the tree: a rule's code, and the package's bounds
        where they matter): ``compute`` must read of the tree nothing but its tags and
        the values that are not texts (see the module docstring), and of its literals
        only the ``Const`` nodes ``reads`` gives of a tree's nodes (found by where they
        are, not by their values), and of each only ``value`` of it."""
        keyed = self._key(trees, source)
        key = None if keyed is None else self._slot(trees, kind, source, keyed, reads, value)
        if key is None:
            return compute(trees.ast("", source))
        slot = (kind, key)
        known = self._answers.get(slot)
        if known is not None and known[1] == _AGREED:
            return cast(T, known[0])
        mine = compute(trees.ast("", source))
        if known is None:
            self._answers[slot] = (mine, _PENDING)
        elif known[1] == _PENDING:
            self._answers[slot] = (known[0], _AGREED) if known[0] == mine else (None, _SPLIT)
        return mine

    def _slot(self, trees: Trees, kind: str, source: str, keyed: _Keyed, reads: Reads,
              value: Callable[[object], object]) -> Key | None:
        """The facts key of ``source`` for ``kind``: its shape, its names where ``kind``
        may read one, and ``value`` of each literal ``kind`` reads; None when those
        literals cannot be placed."""
        number, rest, literals, _ = keyed
        read = (kind, number)
        if read not in self._reads:
            self._reads[read] = self._read(trees, keyed, source, reads)
        found = self._reads[read]
        if found is None:
            return None
        places, named = found
        return number, rest if named else (), tuple(value(literals[k]) for k in places)

    def _read(self, trees: Trees, keyed: _Keyed, source: str, reads: Reads
              ) -> tuple[tuple[int, ...], bool] | None:
        """The places (among its literals) of the literals ``reads`` gives of a tree of
        the shape (the trees of a shape are one tree but for their values, so a place is
        one for all), and whether it gives a ``Const`` that is no literal (a template's
        name, perhaps: then the names are in the key)."""
        ast = trees.ast("", source)
        if ast is None:
            return None
        every = trees.nodes(ast)
        wanted = [n for n in reads(every) if isinstance(n, nodes.Const)]
        if not wanted:
            return (), False
        number = keyed[0]
        if number not in self._places:
            self._places[number] = self._placed(source, every, len(keyed[2]))
        places = self._places[number]
        if places is None:
            return None
        where = {id(n): i for i, n in enumerate(every)}
        found = {places[where[id(n)]] if id(n) in where else None for n in wanted}
        return tuple(sorted(k for k in found if k is not None)), None in found

    def _placed(self, source: str, every: list[nodes.Node], count: int
                ) -> list[int | None] | None:
        """The literal each of ``every`` (a tree's nodes, in tree order) is, by its place
        among ``source``'s literals (None: no literal), read off the tree with markers in
        place of the literals (:func:`literal_marked`); None unless that tree has the
        same nodes and each literal is exactly one ``Const`` of it (not two strings
        joined, as ``"a" "b"`` joins)."""
        marked = self._scanned(literal_marked, source)
        if marked is None:
            return None
        mine = preorder(marked)
        if len(mine) != len(every) or any(
                type(a) is not type(b) for a, b in zip(mine, every, strict=True)):
            return None
        out: list[int | None] = []
        seen: set[int] = set()
        for node in mine:
            place = None
            if isinstance(node, nodes.Const) and isinstance(node.value, str) \
                    and "\x00" in node.value:
                found = MARK.fullmatch(node.value)
                if found is None or int(found.group(1)) in seen:
                    return None
                place = int(found.group(1))
                seen.add(place)
            out.append(place)
        return out if len(seen) == count else None

    def _scanned(self, scan: Callable[[Environment, str], S | None], source: str) -> S | None:
        """``scan`` of ``source`` preprocessed; None where that raises (as
        AstShapes.parse: the parse says why)."""
        try:
            return scan(self._env, self._env.preprocess(source))
        except Exception:
            return None

    def _key(self, trees: Trees, source: str) -> _Keyed | None:
        """(the shape of ``source``, its values that are not texts, its literals, does it
        print nothing?); None when its shape is not shared."""
        if source in self._keys:
            return self._keys[source]
        found = self._keys[source] = self._keyed(trees, source)
        return found

    def _keyed(self, trees: Trees, source: str) -> _Keyed | None:
        if len(source) > SMALL:  # one scan of its bytes, for a walk of its few tags
            return None
        try:  # the build's scan where it parsed the source (AstShapes.scan)
            shaped = trees.literal_shape(source)
        except Exception:
            shaped = None  # as AstShapes.parse: the parse says why
        if shaped is None:
            return None
        shape, values, literals = shaped
        number = self._numbers.setdefault(shape, len(self._numbers))
        if number not in self._layouts:
            self._layouts[number] = _layout(trees, source, values)
        layout = self._layouts[number]
        if layout is None:
            return None
        texts, loud = layout
        rest = tuple(v for i, v in enumerate(values) if i not in texts)
        return (number, rest, tuple(literals),
                not loud and all(values[i].isspace() for i in texts))  # non-empty


def _layout(trees: Trees, source: str, values: list[str]) -> tuple[frozenset[int], bool] | None:
    """Where a shape's texts are among its values and whether it prints something
    whatever they are, read off its first template's tree; None (not shared) when
    that does not parse, has a required block (whose parse depends on its text), or
    its texts are not at one set of places among the values."""
    ast = trees.ast("", source)
    if ast is None:
        return None
    every = trees.nodes(ast)
    if any(isinstance(n, nodes.Block) and n.required for n in every):
        return None
    data = [n.data for n in every if type(n) is nodes.TemplateData]
    places = _texts(data, values)
    if places is None:
        return None
    loud = any(isinstance(n, _LINKS) or (isinstance(n, nodes.Output) and any(
        type(x) is not nodes.TemplateData for x in n.nodes)) for n in every)
    return places, loud


def _texts(data: list[str], values: list[str]) -> frozenset[int] | None:
    """The places of ``data`` (a tree's texts, in source order) among ``values``, in order;
    None unless there is exactly one way (the first and the last fit agree)."""
    first: list[int] = []
    i = 0
    for text in data:
        while i < len(values) and values[i] != text:
            i += 1
        if i == len(values):
            return None
        first.append(i)
        i += 1
    last: list[int] = []
    j = len(values) - 1
    for text in reversed(data):
        while j >= 0 and values[j] != text:
            j -= 1
        last.append(j)
        j -= 1
    last.reverse()
    return frozenset(first) if first == last else None
