"""Compiled template code shared by templates that differ only in their text.

A review renders every prompt a change reaches, at both ends, and compiling is most of a
cold render (:mod:`promptops.render.codecache`: about 0.5 ms a template, against 20 µs to
render one). That cache shares code between equal sources; but 5,000 prompts are rarely
5,000 copies of one text. They are 5,000 texts of one *shape*: ``Write about {{ topic }}
for case 7.``, ``... case 8.``, a template file ``Template 7 about {{ topic }}`` each,
an include of ``partials/s7.j2`` here and ``partials/s12.j2`` there. Jinja's code for such
a template holds its text, and the names of the templates it includes, only as string
constants: the code of ``case 7`` is the code of ``case 8`` with other constants.

So a :class:`ShapeCache` lexes a template (the cheap part of a compile: about a seventh),
replaces the value of every text token, of every template name an
``include``/``import``/``extends`` tag gives as a plain string, and of the template's own
name by a numbered marker, and looks the marked token stream (lines included) up. The
first template of a shape is parsed, generated and compiled from the marked tokens; every
template of that shape then takes that code with its own values put back in its
constants. Nothing else in Jinja's code depends on those values: text goes out as
written (the parser keeps no empty text, so an empty text token is kept as it is, and
text never passes through ``finalize``); a template name is an argument of
``get_template``. Line numbers come from the tokens, so ``debug_info`` and error positions
are the template's own. Anything unusual (a NUL in the source, where the markers live;
any error while lexing or compiling the marked stream) compiles the template as
:class:`~promptops.render.codecache.CodeCache` does, so errors are Jinja's own, raised by
Jinja's own compile. ``tests/review/test_review_skeleton.py`` checks the code against
Jinja's instruction by instruction.

The string and number literals inside tags are marked too where the code provably holds
them as themselves (session 18, issue 26; :mod:`promptops.review.literals` says where:
not where Jinja's optimizer or Python's compiler folds them, a test jumps on them or the
output bound measures them). Which literals of a shape must stay as written is learnt as
its first template compiles (each that fails is put back and the marked tokens compiled
again) and kept per shape of all literals marked; the code is kept per values of those.
``tests/review/test_review_literals.py`` checks the code and the renders against Jinja's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from types import CodeType
from typing import TYPE_CHECKING

from jinja2.bccache import Bucket
from jinja2.lexer import Token, TokenStream, ignored_tokens
from jinja2.parser import Parser

from promptops.pipeline.astshapes import MARK
from promptops.pipeline.textshape import Scan, kept_shape
from promptops.render.codecache import CodeCache, ModeCache
from promptops.review.literals import LITERALS, misplaced, unsafe
from promptops.review.standalone_layout import (
    Key,
    Recipe,
    closed,
    layout,
    recipe,
    rewrites,
    rewritten,
)

if TYPE_CHECKING:
    from jinja2 import Environment, Template
    from jinja2.bccache import BytecodeCache

# the tags whose first token may be a template's name, and what may follow that name for
# it to be the whole argument (not `"a" ~ b`, `"a" if x else "b"`, `"a"|f`)
_NAMING = frozenset({"include", "import", "from", "extends"})
_AFTER_NAME = frozenset({"ignore", "with", "without", "as", "import"})

_Key = tuple[str | None, bool, tuple[Token, ...]]


def _named_here(tokens: list[Token], i: int) -> bool:
    """Whether string token ``i`` is the whole template name of an include, import or
    extends tag (``{% include "p.j2" %}``; not ``"a" ~ b`` nor ``"a" if x else "b"``)."""
    if i < 2 or i + 1 >= len(tokens):
        return False
    tag, before, after = tokens[i - 1], tokens[i - 2], tokens[i + 1]
    return (tag.type == "name" and tag.value in _NAMING and before.type == "block_begin"
            and (after.type == "block_end"
                 or (after.type == "name" and after.value in _AFTER_NAME)))


def _marked(tokens: list[Token], values: list[str]) -> tuple[Token, ...] | None:
    """``tokens`` with each text and plain template name replaced by a marker (its value
    appended to ``values``); None when a value holds a NUL (the markers' delimiter)."""
    out: list[Token] = []
    for i, tok in enumerate(tokens):
        kind, value = tok.type, tok.value
        if isinstance(value, str) and ("\x00" in value or "\\x00" in value):
            return None
        if (kind == "data" and value) or (kind == "string" and _named_here(tokens, i)):
            out.append(Token(tok.lineno, kind, f"\x00{len(values)}\x00"))
            values.append(value)
        else:
            out.append(tok)
    return tuple(out)


# Where a shape's code holds markers: (code, [(index in co_consts, what is there)]), what
# being a string's pieces, a plan for a function's code, "deep" for a tuple or frozenset.
# A string's pieces (_pieces): its text between markers, and each marker as an int, n for
# the value n, ~n for its repr: cut once per shape, so a fill joins them without a regex.
_Pieces = list[str | int]
_Plan = tuple[CodeType, tuple[tuple[int, "_Plan | _Pieces | str"], ...]]
# a marker as Jinja also writes the template's name into a message (its repr), or as it is
_EITHER = re.compile(r"'\\x00([0-9]+)\\x00'|" + MARK.pattern)


def _marks(c: object) -> bool:
    if isinstance(c, str):
        return "\x00" in c or "\\x00" in c
    return isinstance(c, tuple | frozenset) and any(_marks(x) for x in c)


def _plan(code: CodeType) -> _Plan:
    """Which constants of ``code`` (and of its functions) hold markers: found once per
    shape, so filling a template in walks only those."""
    spots: list[tuple[int, _Plan | _Pieces | str]] = []
    for i, c in enumerate(code.co_consts):
        if isinstance(c, CodeType):
            inner = _plan(c)
            if inner[1]:
                spots.append((i, inner))
        elif _marks(c):
            spots.append((i, _pieces(c) if isinstance(c, str) else "deep"))
    return code, tuple(spots)


def _pieces(c: str) -> _Pieces:
    """``c`` cut at its markers (:data:`_Pieces`), once per shape: 5,000 prompts of one
    shape filled each string with two regex passes (the repr markers, then the plain
    ones; about 4% of their compile). One pass reads them alike: a repr marker holds no
    NUL, and a value's repr, put in first, held none for the second pass to find."""
    out: _Pieces = []
    at = 0
    for m in _EITHER.finditer(c):
        if m.start() > at:
            out.append(c[at:m.start()])
        out.append(~int(m.group(1)) if m.group(1) is not None else int(m.group(2)))
        at = m.end()
    if at < len(c):
        out.append(c[at:])
    return out


def _filled(plan: _Plan, values: Sequence[object]) -> CodeType:
    """The planned code with every marker in its constants replaced by its value (or, in
    the message Jinja writes the template's name into, by its value's repr). A constant
    that is a whole marker becomes the value itself: a literal's is a str, int or float
    (:mod:`promptops.review.literals`), which only ever stands alone."""
    def deep(c: object) -> object:
        if isinstance(c, str):
            return joined(_pieces(c))
        if isinstance(c, tuple):
            return tuple(deep(x) for x in c)
        if isinstance(c, frozenset):
            return frozenset(deep(x) for x in c)
        return c

    def joined(pieces: _Pieces) -> object:
        if len(pieces) == 1 and isinstance(first := pieces[0], int) and first >= 0:
            return values[first]  # a whole marker: the value itself
        return "".join(p if isinstance(p, str) else values[p] if p >= 0  # type: ignore[misc]
                       else repr(values[~p]) for p in pieces)

    def fill(at: _Plan) -> CodeType:
        code, spots = at
        consts = list(code.co_consts)
        for i, what in spots:
            consts[i] = (joined(what) if isinstance(what, list)
                         else fill(what) if isinstance(what, tuple) else deep(consts[i]))
        return code.replace(co_consts=tuple(consts))

    return fill(plan)


def _plain(name: str | None) -> bool:
    """Whether a template's name or file name may be marked: Jinja writes the name into
    an f-string of its code by its repr, so one that repr escapes, or that holds a brace
    (which the f-string would read as code), or a marker's text, is compiled as it is."""
    return name is None or (repr(name) == f"'{name}'" and "{" not in name and "}" not in name
                            and "\x00" not in name and "\\x00" not in name)


# the raw lexer's token types that wrap() drops or renames (see _raw)
_DROPPED = frozenset(ignored_tokens | {"raw_begin", "raw_end"})
_RENAMED = {"linestatement_begin": "block_begin", "linestatement_end": "block_end"}
_RawKey = tuple[object, ...]
# literal_shape's key (with the lexer's settings), its texts and names, its literals
_Layout = tuple[_RawKey, list[str], list[object]]
# the same, as written (its literals masked in the key: standalone_layout.layout)
_Written = tuple[tuple[object, str | None, bool, Key], list[str], list[object]]


def _raw(env: Environment, source: str, name: str | None, filename: str | None,
         text: str | None = None) -> tuple[_RawKey, list[str], list[object]] | None:
    """The template's shape from Jinja's raw token stream (``Lexer.tokeniter``: before
    ``wrap`` makes token objects and converts values, and before the extensions' stream
    filters), with the values it marks; None when it does not lex.

    Every token ``wrap`` keeps is in the key (line, type, raw value) but the values the
    shape marks: each non-empty text, whose value is ``wrap``'s (newlines normalized), and
    each plain template name (:func:`_named_here`) written without a backslash or a line
    break, whose raw value inside the quotes is then what ``wrap``'s unescaping makes of
    it. So two sources with one key make one token stream up to those values, which the
    extensions' filters (the nesting guard) and the parser see alike. The string and
    number literals inside tags are values too, as ``wrap`` converts them (the third
    list): which of them the code holds as markers is learnt per raw shape
    (:meth:`_Shapes._lexed`). ``text``: the source already preprocessed, when the caller
    has it.
    """
    lexer = env.lexer
    try:
        if text is None:
            text = env.preprocess(source, name, filename)
        tokens = [t if t[1] not in _RENAMED else (t[0], _RENAMED[t[1]], t[2]) for t in
                  lexer.tokeniter(text, name, filename) if t[1] not in _DROPPED]
    except Exception:  # the full compile raises it, as Jinja words it
        return None
    key: list[object] = [lexer, filename, name is not None]
    values: list[str] = []
    literals: list[object] = []
    last = len(tokens) - 1
    for i, token in enumerate(tokens):
        line, kind, value = token
        if kind == "data" and value:
            key.append((line, kind, len(values)))
            values.append(lexer._normalize_newlines(value))
        elif (kind == "string" and 2 <= i < last and tokens[i - 1][1] == "name"
              and tokens[i - 1][2] in _NAMING and tokens[i - 2][1] == "block_begin"
              and (tokens[i + 1][1] == "block_end" or (tokens[i + 1][1] == "name"
                                                       and tokens[i + 1][2] in _AFTER_NAME))
              and not any(c in value for c in "\\\n\r")):
            key.append((line, kind, len(values)))
            values.append(value[1:-1])
        elif kind in LITERALS:
            try:
                literals.append(next(lexer.wrap(iter((token,)))).value)
            except Exception:  # the full compile raises it, as Jinja words it
                return None
            key.append((line, kind, None))
        else:
            key.append(token)  # the raw tuple itself: (line, type, raw value)
    return tuple(key), values, literals


def _typed(literals: list[object], spots: frozenset[int] | range) -> tuple[object, ...]:
    """The literals at ``spots`` with their types (``7`` and ``7.0`` are equal)."""
    return tuple((type(literals[n]), literals[n]) for n in sorted(spots))


def _all_typed(literals: list[object]) -> tuple[object, ...]:
    """Every one of ``literals`` with its type (:func:`_typed` of all their places)."""
    return _typed(literals, range(len(literals)))


_Plans = dict[_RawKey, tuple[frozenset[int], dict[tuple[object, ...], "_Plan"]]]


def _learnt(plans: _Plans, key: _RawKey, unsafe: frozenset[int], literals: list[object],
            code: _Plan) -> None:
    """Keep ``code`` by ``key`` for these values of the literals it keeps as written
    (``unsafe``; when more are learnt, the plans of fewer go)."""
    entry = plans.get(key)
    if entry is None or entry[0] != unsafe:
        entry = plans[key] = unsafe, {}
    entry[1][_typed(literals, unsafe)] = code


class _Shapes:
    """Code by template shape, for the environments of one whitespace mode."""

    def __init__(self, scans: Mapping[str, Scan | None]) -> None:
        self.scans = scans  # the build's, by source as written (ShapeCache)
        self.signatures: dict[str, tuple[object, ...]] = {}  # layout's, by text
        self.code: dict[_Key, _Plan | None] = {}  # None: the shape does not compile
        # by the shape with every literal in its tags marked: those to keep as written
        self.unsafe: dict[_Key, frozenset[int]] = {}
        # the same plans by raw shape (_raw): a template of a raw shape seen before skips
        # wrap(), the stream filters and the token objects
        # (each literal there kept as written, where the code may not hold it: learnt by
        # marked tokens, below; and a plan per value of those literals)
        self.raw: dict[_RawKey, tuple[frozenset[int], dict[tuple[object, ...], _Plan]]] = {}
        # and by text_shape's key, once the lexer agreed with it: a template of a known
        # layout skips Jinja's lexer too (promptops/pipeline/astshapes.py says when)
        self.by_text: dict[_RawKey, tuple[frozenset[int], dict[tuple[object, ...], _Plan]]] = {}
        # and, in the standalone mode, by the layout as written, with what the rewrite
        # does to its values: no rewrite and no scan of the rewritten text (the literals
        # kept as written and a plan per their values, as by_text's)
        self.by_source: dict[_RawKey, tuple[Recipe, frozenset[int],
                                            dict[tuple[object, ...], _Plan]]] = {}

    def compile(self, env: Environment, source: str, name: str | None,
                filename: str | None) -> CodeType:
        """``env.compile(source, name, filename)``, from the code of its shape when one
        compiled before."""
        plain = _plain(name) and _plain(filename)
        written: _Written | None = None
        if plain and rewrites(env):  # by the source as written: no rewrite, no rescan
            found = layout(env, source, self.signatures, self.scans)
            if found is not None:
                written = (env.lexer, filename, name is not None, found[0]), *found[1:]
                learnt = self.by_source.get(written[0])
                plan = None if learnt is None else learnt[2].get(_typed(found[2], learnt[1]))
                if learnt is not None and plan is not None:
                    return _filled(plan, [*([] if name is None else [name]),
                                          *rewritten(found[1], learnt[0]), *found[2]])
        try:
            text = env.preprocess(source, name, filename)
        except Exception:  # Jinja's compile raises it, as Jinja words it
            return env.compile(source, name, filename)
        laid: _Layout | None = None
        if plain:
            fast = kept_shape(env, text, self.scans)  # the build scanned most as written
            if fast is not None:
                laid = (env.lexer, filename, name is not None, fast[0]), fast[1], fast[2]
                known = self._laid(laid)
                if known is not None:  # no Jinja token made
                    self._learn(written, laid, known)
                    return _filled(known[1], [*([] if name is None else [name]), *fast[1],
                                              *fast[2]])
        code = self._lexed(env, source, name, filename, text, laid)
        known = None if laid is None else self._laid(laid)
        if laid is not None and known is not None:
            self._learn(written, laid, known)
        return code

    def _laid(self, layout: _Layout) -> tuple[frozenset[int], _Plan] | None:
        """The code of a layout learnt before, for its literals kept as written (and
        which those are)."""
        entry = self.by_text.get(layout[0])
        plan = None if entry is None else entry[1].get(_typed(layout[2], entry[0]))
        return None if entry is None or plan is None else (entry[0], plan)

    def _learn(self, written: _Written | None, laid: _Layout,
               code: tuple[frozenset[int], _Plan]) -> None:
        """Keep ``code`` (which literals it keeps as written, and the plan for their
        values) by the layout as written, when the rewrite's layout values (the scan's
        of the rewritten text, ``laid``) are what the key's recipe makes of the values
        as written (promptops/review/standalone_layout.py), literals alike."""
        if written is None or _all_typed(written[2]) != _all_typed(laid[2]):
            return
        entry = self.by_source.get(written[0])
        if entry is None:
            if not closed(written[0][3]):
                return
            steps = recipe(written[0][3])
            if rewritten(written[1], steps) != laid[1]:
                return
            entry = self.by_source[written[0]] = steps, code[0], {}
        elif entry[1] != code[0]:  # more literals learnt to be kept: the plans of fewer go
            entry = self.by_source[written[0]] = entry[0], code[0], {}
        entry[2][_typed(written[2], code[0])] = code[1]

    def _remember(self, layout: _Layout | None, values: list[str], literals: list[object],
                  code: _Plan, unsafe: frozenset[int]) -> None:
        """Keep ``code`` by the layout's key, when the layout's values (texts and names,
        and literals with their types) are the lexer's; ``unsafe``: the literals the code
        keeps as written (a plan per their values, as by raw shape)."""
        if layout is not None and layout[1] == values \
                and _all_typed(layout[2]) == _all_typed(literals):
            _learnt(self.by_text, layout[0], unsafe, literals, code)

    def _lexed(self, env: Environment, source: str, name: str | None, filename: str | None,
               text: str, layout: _Layout | None) -> CodeType:
        """:meth:`compile` through Jinja's lexer: by raw shape, else by marked tokens."""
        raw = _raw(env, source, name, filename, text)
        named = [] if name is None else [name]
        if raw is not None and _plain(name) and _plain(filename):
            entry = self.raw.get(raw[0])
            known = None if entry is None else entry[1].get(_typed(raw[2], entry[0]))
            if entry is not None and known is not None \
                    and not any(_marks(v) for v in (*raw[1], *raw[2])):
                self._remember(layout, raw[1], raw[2], known, entry[0])
                return _filled(known, [*named, *raw[1], *raw[2]])
        try:
            tokens = list(env._tokenize(source, name, filename))
        except Exception:  # Jinja's compile raises it, as Jinja words it
            return env.compile(source, name, filename)
        values: list[object] = [] if name is None else [name]
        marked = _marked(tokens, values)  # type: ignore[arg-type]  # all str here
        if marked is None or not _plain(name) or not _plain(filename):
            return env.compile(source, name, filename)
        texts = len(values)
        code, unsafe = self._literal_code(env, marked, values, name, filename)
        if code is None:
            return env.compile(source, name, filename)
        literals = values[texts:]
        if raw is not None and raw[1] == values[len(named):texts] \
                and _all_typed(raw[2]) == _all_typed(literals):
            # the raw shape marks what this one does, in order
            _learnt(self.raw, raw[0], unsafe, literals, code)
            self._remember(layout, raw[1], literals, code, unsafe)
        return _filled(code, values)

    def _literal_code(self, env: Environment, marked: tuple[Token, ...], values: list[object],
                      name: str | None, filename: str | None
                      ) -> tuple[_Plan | None, frozenset[int]]:
        """The code of ``marked`` with each literal inside its tags marked too where
        :mod:`promptops.review.literals` says the code holds it as itself (each literal's
        value appended to ``values``), and which literals (their places among the
        literals) are kept as written: those that may not be marked, learnt per shape of
        all literals marked."""
        spots = [i for i, t in enumerate(marked) if t.type in LITERALS
                 and not (isinstance(t.value, str) and "\x00" in t.value)]
        base = len(values)
        values.extend(marked[i].value for i in spots)
        widest = list(marked)
        for n, i in enumerate(spots):
            widest[i] = Token(marked[i].lineno, marked[i].type, f"\x00{base + n}\x00")
        shape = (filename, name is not None, tuple(widest))
        while True:
            unsafe = self.unsafe.get(shape, frozenset())
            tokens = list(widest)
            for n in unsafe:
                tokens[spots[n - base]] = marked[spots[n - base]]
            key = (filename, name is not None, tuple(tokens))
            if key not in self.code:
                kept = frozenset(range(base, base + len(spots))) - unsafe
                compiled, bad = _compile_marked(
                    env, key[2], None if name is None else "\x000\x00", filename, kept)
                if bad:
                    self.unsafe[shape] = unsafe | bad
                    continue
                self.code[key] = None if compiled is None else _plan(compiled)
            return self.code[key], frozenset(n - base for n in unsafe)


def _compile_marked(env: Environment, tokens: tuple[Token, ...], name: str | None,
                    filename: str | None, literals: frozenset[int] = frozenset()
                    ) -> tuple[CodeType | None, set[int]]:
    """The code of the marked tokens (``name``: the name's marker), None when they do not
    compile; and which of the marked ``literals`` the code may not hold as markers
    (:mod:`promptops.review.literals`): when any, the code is not to be used."""
    try:
        parser = Parser(env, "", name, filename)  # then fed the marked tokens
        parser.stream = TokenStream(iter(tokens), name, filename)
        tree = parser.parse()
        bad = unsafe(tree, literals, env) if literals else set()
        generated = env._generate(tree, name, filename)
        code = env._compile(generated, filename or "<template>")
        return code, bad | misplaced(code, literals) if literals else bad
    except Exception:  # the template's own compile says why, as Jinja words it
        return None, set(literals)  # or a marked literal did: compiled as written


class _ShapeModeCache(ModeCache):
    """Jinja's hook for templates loaded by name: by (name, checksum) as before, then by
    shape."""

    def __init__(self, shapes: _Shapes) -> None:
        super().__init__()
        self.shapes = shapes

    def get_bucket(self, environment: Environment, name: str, filename: str | None,
                   source: str) -> Bucket:
        bucket = super().get_bucket(environment, name, filename, source)
        if bucket.code is None:
            bucket.code = self.shapes.compile(environment, source, name, filename)
            self.dump_bytecode(bucket)
        return bucket


class ShapeCache(CodeCache):
    """A :class:`~promptops.render.codecache.CodeCache` that compiles each template shape
    once (the module docstring says what a shape is). ``scans``: a template index's
    (:meth:`~promptops.pipeline.templates.TemplateIndex.written_scans`), to key by."""

    def __init__(self, scans: Mapping[str, Scan | None] | None = None) -> None:
        super().__init__()
        self._shapes: dict[str | None, _Shapes] = {}
        self._scans = {} if scans is None else scans

    def _of(self, whitespace: str | None) -> _Shapes:
        found = self._shapes.get(whitespace)
        if found is None:
            found = self._shapes[whitespace] = _Shapes(self._scans)
        return found

    def loader_cache(self, whitespace: str | None) -> BytecodeCache:
        found = self._modes.get(whitespace)
        if found is None:
            found = self._modes[whitespace] = _ShapeModeCache(self._of(whitespace))
        return found

    def from_string(self, env: Environment, whitespace: str | None, source: str) -> Template:
        key = (whitespace, source)
        code = self._inline.get(key)
        if code is None:
            code = self._inline[key] = self._of(whitespace).compile(env, source, None, None)
        return env.template_class.from_code(env, code, env.make_globals(None), None)
