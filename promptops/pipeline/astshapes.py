"""Parse trees shared by templates that differ only in their text.

Validation parses every template for its include graph and lint inspects the trees; a
package of 5,000 prompts is rarely 5,000 shapes of template, though: ``Write about {{
topic }} for case 7.`` and ``... case 8.``, an include of ``partials/s7.j2`` here and
``partials/s12.j2`` there. Jinja's parser never looks inside a text or inside the string
that names an included template: the tree of ``case 7`` is the tree of ``case 8`` with
other strings in its ``TemplateData`` and ``Const`` nodes. Parsing is most of what
validating a prompt costs (Jinja's lexer, its token objects, the nesting guard's stream
filter and the recursive parser: about 0.8 ms for a ten-line prompt), so
:class:`AstShapes` lexes each template once (Jinja's raw ``tokeniter``, which a parse
runs anyway) and keys its *shape* on the raw tokens: every token's line, type and raw
value, but each non-empty text and each plain template name (what
:mod:`promptops.review.skeleton` marks too) replaced by its place in a list of values.

The first template of a shape is parsed from those very tokens, as Jinja would
(``wrap``, the extensions' stream filters, the parser), and kept for a while. When a
second template of the same shape comes, the shape's tokens are parsed once more with a
numbered marker in place of each value, and the marked tree filled with the first
template's values must equal the first template's own tree, node for node, line for
line; then it, and every later template of the shape, is a copy of the marked tree with
its own values put in (about a sixth of a parse). A shape whose trees do not match, a
value that holds a NUL (the markers' delimiter), and anything that does not lex or parse
takes Jinja's own parse (:func:`promptops.sandbox.nesting.parse`), so a syntax error is
Jinja's, positioned as before. ``tests/pipeline/test_ast_shapes.py`` checks the trees
against Jinja's.

Memory is bounded: shapes seen once are remembered up to :data:`PENDING` at a time (a
package where no shape repeats keeps no more than that), and only a shape seen twice keeps
its marked tree.

A template of a shape seen before is first looked up by its text alone, with no Jinja
token (:mod:`promptops.pipeline.textshape`: ``text_shape``, ``literal_shape``).
"""

from __future__ import annotations

import io
import pickle
import re
from collections.abc import Callable, Iterable, Iterator, Mapping

from jinja2 import Environment, nodes
from jinja2.lexer import Lexer, Token, TokenStream, ignored_tokens
from jinja2.parser import Parser

from promptops.pipeline.textshape import Key as _Key
from promptops.pipeline.textshape import Scan, as_written, literal_shape
from promptops.sandbox.nesting import parse as jinja_parse

PENDING = 1024  # shapes seen once, remembered until a second template of theirs comes

# a numbered marker in a marked tree: the place of the value it stands for
MARK = re.compile("\x00([0-9]+)\x00")
# the tags whose first token may be a template's name, and what may follow that name for
# it to be the whole argument (as review/skeleton.py reads them)
_NAMING = frozenset({"include", "import", "from", "extends"})
_AFTER_NAME = frozenset({"ignore", "with", "without", "as", "import"})
_DROPPED = frozenset(ignored_tokens | {"raw_begin", "raw_end"})
_LITERALS = frozenset({"string", "integer", "float"})
_RENAMED = {"linestatement_begin": "block_begin", "linestatement_end": "block_end"}

_Raw = list[tuple[int, str, str]]
_Fast = Scan  # what literal_shape makes

_Ref = tuple[str | None, int]
_Walk = Callable[[nodes.Template], tuple[_Ref, ...]]


def _named(value: object) -> str | None:
    """A marked reference's name: a literal's value that is no string names nothing (as
    ``references_in`` reads a ``Const`` of a number)."""
    return value if isinstance(value, str) else None


def _place(name: str | None) -> int | str | None:
    """A reference's name in a marked tree: the value's place when it is a marker."""
    found = MARK.fullmatch(name) if name is not None else None
    return int(found.group(1)) if found is not None else name


class _Unshared(Exception):
    """A marked tree holds a marker inside a longer string: not a shape to share."""


def _shape(lexer: Lexer, raw: _Raw) -> tuple[_Key, list[object], list[int], int] | None:
    """The shape's key, the values it marks, where they are in ``raw``, and how many of
    them are texts and names (the string and number literals inside tags come after
    them, as ``wrap`` converts them); None when a value holds a NUL or a marker's escaped
    text, or a literal does not convert."""
    key: list[object] = [lexer]
    values: list[object] = []
    where: list[int] = []
    literals: list[object] = []
    spots: list[int] = []
    kept = [(i, t) for i, t in enumerate(raw) if t[1] not in _DROPPED]
    last = len(kept) - 1
    for j, (i, token) in enumerate(kept):
        line, kind, value = token
        if kind in _RENAMED:
            kind = _RENAMED[kind]
            token = (line, kind, value)
        if kind == "data" and value:
            if "\x00" in value or "\\x00" in value:
                return None
            key.append((line, kind, len(values)))
            values.append(lexer._normalize_newlines(value))
            where.append(i)
        elif (kind == "string" and 2 <= j < last and kept[j - 1][1][1] == "name"
              and kept[j - 1][1][2] in _NAMING and kept[j - 2][1][1] == "block_begin"
              and (kept[j + 1][1][1] == "block_end"
                   or (kept[j + 1][1][1] == "name" and kept[j + 1][1][2] in _AFTER_NAME))
              and not any(c in value for c in "\\\n\r\x00")):
            key.append((line, kind, len(values)))
            values.append(value[1:-1])
            where.append(i)
        elif kind in _LITERALS:  # a value of the tree: Jinja's parser never reads it
            if "\x00" in value or "\\x00" in value:
                return None
            try:
                literal = next(lexer.wrap(iter((token,)))).value
            except Exception:  # the parse raises it, as Jinja words it
                return None
            if isinstance(literal, str) and "\x00" in literal:  # an escape made one
                return None
            literals.append(literal)
            key.append((line, kind, None))
            spots.append(i)
        else:
            key.append(token)
    return tuple(key), values + literals, where + spots, len(values)


def _wrapped(lexer: Lexer, raw: _Raw, marks: dict[int, str]) -> Iterator[Token]:
    """``lexer.wrap(raw)`` with the token at each index of ``marks`` (a number literal)
    holding that marker as its value (``wrap`` would convert it to a number)."""
    for i, token in enumerate(raw):
        if i in marks:
            yield Token(token[0], token[1], marks[i])
        else:
            yield from lexer.wrap(iter((token,)))


def _parsed(env: Environment, raw: _Raw, marks: dict[int, str] | None = None
            ) -> nodes.Template:
    """What ``env.parse`` makes of the source ``raw`` was lexed from: Jinja's own steps
    (``Environment._tokenize``, ``Parser.parse``) on the tokens already lexed."""
    stream = TokenStream(_wrapped(env.lexer, raw, marks) if marks else env.lexer.wrap(iter(raw)),
                         None, None)
    for ext in env.iter_extensions():
        filtered = ext.filter_stream(stream)
        stream = (filtered if isinstance(filtered, TokenStream)
                  else TokenStream(filtered, None, None))
    parser = Parser(env, "")  # then fed the tokens: lexing "" costs nothing
    parser.stream = stream
    return parser.parse()


class _Pickler(pickle.Pickler):
    """Pickles a marked tree: the environment and each marker by reference, so that
    :class:`_Unpickler` puts a template's own environment and values there."""

    def persistent_id(self, obj: object) -> object:
        if isinstance(obj, Environment):
            return "env"
        if isinstance(obj, str) and "\x00" in obj:
            found = MARK.fullmatch(obj)
            if found is None:  # a marker inside a longer string: not a shape to share
                raise _Unshared(obj)
            return int(found.group(1))
        return None


class _Unpickler(pickle.Unpickler):
    def __init__(self, data: bytes, env: Environment, values: list[object]) -> None:
        super().__init__(io.BytesIO(data))
        self.env, self.values = env, values

    def persistent_load(self, pid: object) -> object:
        if pid == "env":
            return self.env
        assert isinstance(pid, int)
        return self.values[pid]


def _frozen(marked: nodes.Template) -> bytes:
    """The marked tree as bytes a template's tree is made from (:func:`_tree`)."""
    out = io.BytesIO()
    _Pickler(out, protocol=pickle.HIGHEST_PROTOCOL).dump(marked)
    return out.getvalue()


def _tree(frozen: bytes, env: Environment, values: list[object]) -> nodes.Template:
    """A template's tree: a copy of its shape's marked tree (one C-speed unpickling, every
    node new), its own values where the markers were."""
    tree = _Unpickler(frozen, env, values).load()
    assert isinstance(tree, nodes.Template)
    return tree


def _same(a: object, b: object) -> bool:
    """Whether two trees are equal field for field and line for line (``Node.__eq__``
    ignores lines), the environment by identity."""
    if type(a) is not type(b):
        return False
    if isinstance(a, nodes.Node):
        da, db = a.__dict__, b.__dict__
        return da.keys() == db.keys() and all(_same(da[k], db[k]) for k in da)
    if isinstance(a, list | tuple):
        assert isinstance(b, list | tuple)
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, Environment):
        return a is b
    return bool(a == b)


def _agree(fast: _Fast, values: list[object], texts: int
           ) -> bool:
    """Whether :func:`literal_shape`'s values are the lexer's (``values``, its first
    ``texts`` the texts and names), each literal of the same type."""
    return fast[1] == values[:texts] and [(type(v), v) for v in fast[2]] == [
        (type(v), v) for v in values[texts:]]


class AstShapes:
    """Parses templates, one parse per shape (the module docstring says what a shape is)."""

    def __init__(self, *, keep_scans: bool = False) -> None:
        # literal_shape of each source parsed or scanned (preprocessed by the environment
        # kept with them), when asked to keep them: what lint's shape tables key a
        # template by (:meth:`scan`)
        self._scans: dict[str, _Fast | None] | None = {} if keep_scans else None
        self._scan_env: Environment | None = None
        self._marked: dict[_Key, bytes | None] = {}  # None: the shape is not shared
        self._first: dict[_Key, tuple[nodes.Template, list[object]]] = {}  # seen once
        # marked trees by text_shape's key, kept once the lexer agreed with it (as many
        # as the shared shapes' keys: each is a tag layout seen, lexed and shared)
        self._by_text: dict[tuple[object, _Key], bytes] = {}
        # the last tree made from a shape, with what it was made of (references below)
        self._last: tuple[nodes.Template, bytes, list[object], Environment] | None = None
        # each shape's references: a value's place, or the name as written, and the line
        self._refs: dict[bytes, tuple[tuple[int | str | None, int], ...]] = {}
        # the last source known_references scanned and did not know, with its environment,
        # preprocessed text and literal_shape: the parse that follows it reads them
        self._missed: tuple[str, Environment, str, _Fast | None] | None = None

    def parse(self, env: Environment, source: str) -> nodes.Template:
        """``promptops.sandbox.nesting.parse(env, source)``, from its shape's tree when a
        template of that shape was parsed before."""
        try:
            lexer = env.lexer  # a property: it builds a key of the environment's settings
            missed, self._missed = self._missed, None
            if missed is not None and missed[0] is source and missed[1] is env:
                text, fast = missed[2], missed[3]  # scanned by known_references just now
            else:
                text = env.preprocess(source)
                fast = self._scanned(env, source, text)
            if fast is not None:
                known = self._by_text.get((lexer, fast[0]))
                if known is not None:  # no Jinja token made: the module docstring
                    return self._made(known, env, [*fast[1], *fast[2]])
            raw: _Raw = list(lexer.tokeniter(text, None, None))
        except Exception:  # Jinja's parse raises it, as Jinja words it and where
            return jinja_parse(env, source)
        shape = _shape(lexer, raw)
        if shape is None:
            return self._jinja(env, source, raw)
        key, values, where, texts = shape
        marked = self._marked.get(key)
        if marked is not None:
            if fast is not None and _agree(fast, values, texts):
                self._by_text[(lexer, fast[0])] = marked
            return self._made(marked, env, values)
        if key in self._marked:
            return self._jinja(env, source, raw)
        first = self._first.pop(key, None)
        if first is None:
            ast = self._jinja(env, source, raw)
            self._first[key] = (ast, values)
            if len(self._first) > PENDING:
                del self._first[next(iter(self._first))]
            return ast
        marked = self._marked[key] = self._mark(env, raw, where, *first)
        if marked is None:
            return self._jinja(env, source, raw)
        if fast is not None and _agree(fast, values, texts):
            self._by_text[(lexer, fast[0])] = marked
        return self._made(marked, env, values)

    def _keep(self, env: Environment, source: str, fast: _Fast | None) -> None:
        if self._scans is not None:
            if env is not self._scan_env:
                self._scans.clear()
                self._scan_env = env
            self._scans[source] = fast

    def written_scans(self) -> Mapping[str, _Fast | None]:
        """The scans kept (:meth:`scan`), when they are of the sources as written
        (:func:`~promptops.pipeline.textshape.as_written`), for another environment's
        scan of them (:func:`~promptops.pipeline.textshape.kept_shape`); else none."""
        env = self._scan_env
        return ({} if self._scans is None or env is None or not as_written(env)
                else self._scans)

    def _scanned(self, env: Environment, source: str, text: str | None) -> _Fast | None:
        """``literal_shape(env, text)`` of ``text``, ``source`` preprocessed (None:
        preprocessed here, only when needed): the kept one when there is one, else
        scanned (and kept, when this object keeps them)."""
        if self._scans is not None and env is self._scan_env and source in self._scans:
            return self._scans[source]  # (kept: its preprocessing ran, and succeeded)
        fast = literal_shape(env, env.preprocess(source) if text is None else text)
        self._keep(env, source, fast)
        return fast

    def scan(self, env: Environment, source: str) -> _Fast | None:
        """``literal_shape(env, env.preprocess(source))``, kept from this object's parse or
        scan of ``source`` when it keeps them: a forked lint child's shape tables key
        every template the build parsed by the build's scan, and the parse of one it
        did not follows lint's scan of it (issue 26, session 21: on ``real``, 4,700
        scans in the child, 2,150 of them twice). Raises what the preprocessing raises."""
        return self._scanned(env, source, None)

    def _made(self, frozen: bytes, env: Environment, values: list[object]) -> nodes.Template:
        tree = _tree(frozen, env, values)
        self._last = (tree, frozen, values, env)
        return tree

    def references(self, tree: nodes.Template, walk: _Walk) -> tuple[_Ref, ...] | None:
        """``walk(tree)`` (the template names a tree's includes, imports and extends give,
        with their lines) without walking ``tree``, when it is the last tree made from a
        shape: the shape's marked tree is walked once, and a name that is a marker is
        the template's own value there (a marked tree differs from its templates' trees
        only in those values); None for any other tree."""
        last = self._last
        if last is None or last[0] is not tree:
            return None
        _, frozen, values, env = last
        return self._referenced(frozen, env, values, walk)

    def known_references(self, env: Environment, source: str, walk: _Walk
                         ) -> tuple[_Ref, ...] | None:
        """``walk`` of ``source``'s tree, made without the tree when :func:`literal_shape`
        knows its layout (every template of it parses: only its values differ, which
        the parser never reads); None when it does not (parse it).

        A caller that keeps no tree (a forked validation, which sends back references
        only) then skips the unpickling of a tree per template: a quarter of its CPU
        on 2,500 prompt files of one shape."""
        try:
            text = env.preprocess(source)
            fast = literal_shape(env, text)
        except Exception:  # the parse raises it, as Jinja words it
            return None
        frozen = None if fast is None else self._by_text.get((env.lexer, fast[0]))
        if fast is None or frozen is None:
            # the caller parses it next: that parse takes this scan, not a second one
            # (on 10,000 distinct prompts, a layout met once or a source the scan refuses
            # was scanned twice: 0.3 s of the build's CPU, session 20)
            self._missed = (source, env, text, fast)
            return None
        return self._referenced(frozen, env, [*fast[1], *fast[2]], walk)

    def _referenced(self, frozen: bytes, env: Environment, values: list[object], walk: _Walk
                    ) -> tuple[_Ref, ...]:
        """The references of the tree ``frozen`` filled with ``values`` makes, from its
        marked tree's walked once."""
        plan = self._refs.get(frozen)
        if plan is None:
            marked = _tree(frozen, env, [f"\x00{k}\x00" for k in range(len(values))])
            plan = self._refs[frozen] = tuple((_place(name), line) for name, line in walk(marked))
        return tuple((_named(values[n]) if isinstance(n, int) else n, line) for n, line in plan)

    @staticmethod
    def _jinja(env: Environment, source: str, raw: _Raw) -> nodes.Template:
        try:
            return _parsed(env, raw)
        except Exception:  # Jinja's parse raises it (or a RecursionError, turned)
            return jinja_parse(env, source)

    @staticmethod
    def _mark(env: Environment, raw: _Raw, where: list[int], first: nodes.Template,
              values: list[object]) -> bytes | None:
        """The tree of ``raw`` with each value at ``where`` marked (pickled), when
        filling it with the first template's ``values`` gives that template's tree; else
        None."""
        try:
            frozen = _frozen(_parsed(env, *_marking(raw, enumerate(where))))
            return frozen if _same(_tree(frozen, env, values), first) else None
        except Exception:  # a shape this module cannot share: every template parses
            return None


def _marking(raw: _Raw, marks: Iterable[tuple[int, int]]) -> tuple[_Raw, dict[int, str]]:
    """``raw`` with the value of the token at each index of ``marks`` (marker number, index)
    replaced by that numbered marker, and the number literals' markers (put in once
    wrapped: ``wrap`` would make a marker a number), as :func:`_parsed` takes them."""
    marked_raw = list(raw)
    numbers: dict[int, str] = {}
    for n, i in marks:
        line, kind, value = raw[i]
        mark = f"\x00{n}\x00"
        if kind in ("integer", "float"):
            numbers[i] = mark
        else:
            marked_raw[i] = (line, kind, mark if kind == "data" else f"{value[0]}{mark}{value[0]}")
    return marked_raw, numbers


def literal_marked(env: Environment, source: str) -> nodes.Template | None:
    """The tree of ``source`` (preprocessed) with the ``k``-th literal of
    :func:`literal_shape` replaced by the string ``"\\x00k\\x00"`` (a number too): where a
    shape's trees hold their literals (:mod:`promptops.lint.shaped`). None when the scan
    declines, its literals are not the lexer's, or this does not lex or parse."""
    fast = literal_shape(env, source)
    try:  # Jinja's parse says why it does not lex or parse
        raw: _Raw = list(env.lexer.tokeniter(source, None, None))
        shape = _shape(env.lexer, raw)
        if fast is None or shape is None or not _agree(fast, shape[1], shape[3]):
            return None
        return _parsed(env, *_marking(raw, enumerate(shape[2][shape[3]:])))
    except Exception:
        return None
