"""Stage 1: bytes from a source -> parsed YAML documents that can answer "where?".

Parsing takes the fast path (``promptops.pipeline.yamlio.fast``: libyaml with YAML 1.2 typing,
about ten times faster than ruamel.yaml's round-trip loader on prompt-sized files);
positions are needed only to report a problem, so the round-trip parse that carries
them runs lazily, for files that have one. A file the fast path refuses is parsed
again by ruamel.yaml, whose error (and position) is the one reported. Both paths hold
every document to :mod:`promptops.pipeline.yamlio.limits` (nesting, aliases, integer size) before
anything recursive sees it; a document over a limit is a positioned problem.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from promptops.errors import Problem
from promptops.pipeline.lines import splitlines_line
from promptops.pipeline.yamlio import bodies, placing
from promptops.pipeline.yamlio import fast as fastyaml
from promptops.pipeline.yamlio import limits as yaml_limits
from promptops.pipeline.yamlio.limits import LimitExceeded

Loc = tuple[str | int, ...]
EVENT_WALKS = 3  # positions read off a file's events, at most (LoadedFile._events)



@cache
def _ruamel(typ: str) -> Any:
    """ruamel.yaml, imported only for a problem, a position or a fallback parse: a
    valid package never needs it, and it costs a long-running `serve` ~3 MB."""
    from ruamel.yaml import YAML

    return YAML(typ=typ, pure=False) if typ == "safe" else YAML(typ=typ)


def _marked_error() -> type[Exception]:
    from ruamel.yaml.error import MarkedYAMLError

    return MarkedYAMLError


class _Shed:
    """What a :class:`LoadedFile` holds in place of its data once shed. Pickled by name
    (this module's ``_SHED``), so a shed file sent to another process is still shed
    there and parses its data again when asked: a plain ``object()`` came back as a new
    object, which the other process's ``data`` returned as the file's data (a forked
    lint half's files arrive shed in a memo that keeps YAML, so nothing sheds them again;
    only a whole run that runs every rule, after a refused merge, reads their data: PO108)."""

    def __reduce__(self) -> str:
        return "_SHED"


_SHED = _Shed()


class LoadedFile:
    """One YAML file: its text, its plain data, and positions on demand.

    ``shed()`` drops the parsed data once a model has been validated from it: files
    kept for later rebuilds (the package memo) then cost their text, not a second
    copy of their content; ``data`` parses again if anything still asks for it.

    A file parsed straight from its bytes (:func:`load_yaml`) keeps those bytes, which
    the source holds anyway, and decodes its ``text`` only when something reads it
    (a position, lint): a build of files without problems never decodes them, and a
    memo handed between processes (:mod:`promptops.pipeline.prefetch`) pickles bytes.
    """

    __slots__ = ("_blocks", "_data", "_events", "_raw", "_seen", "_text", "_tree", "path")

    def __init__(self, path: str, text: str | None, data: object, *,
                 raw: bytes | None = None,
                 blocks: tuple[bodies.Block, ...] | None = None,
                 composes: bool = False) -> None:
        """``text``, or ``raw``: bytes libyaml read whole (so valid UTF-8, a BOM
        allowed, which decoding drops as :func:`decode` does); ``blocks``: the long
        literal blocks the parse of ``raw`` cut (:func:`fastyaml.read_bytes`), kept
        for positions; ``composes``: libyaml composed the file whole without an error
        (the fast path read it, cutting nothing), so a position may be read off its
        events (:mod:`promptops.pipeline.yamlio.placing`)."""
        if text is None and raw is None:
            raise ValueError("a LoadedFile needs its text or its bytes")
        self.path, self._text, self._raw = path, text, raw
        self._data: object = data
        self._tree: object = None
        self._blocks = blocks
        # how many more positions may be read off the events before the graph is composed
        # (each read is from the file's start: a file with many goes back to one graph)
        self._events = EVENT_WALKS if composes and blocks is None else 0

    @property
    def text(self) -> str:
        if self._text is None:
            assert self._raw is not None
            self._text = self._raw.decode("utf-8-sig")
        return self._text

    @property
    def data(self) -> object:
        if self._data is _SHED:
            self._data = _parse(self.text, self._raw)
        return self._data

    def shed(self) -> None:
        self._data = _SHED

    def drop_bytes(self, held: bytes) -> bool:
        """Forget the file's bytes if they are ``held`` (the very object), before this is
        pickled to a process that holds them too and gives them back with
        :meth:`restore_bytes` (:mod:`promptops.pipeline.prefetch`: a forked child's
        results no longer carry a copy of every file its parent read)."""
        if self._raw is not held:
            return False
        self._raw = None
        return True

    def restore_bytes(self, raw: bytes) -> None:
        """The bytes :meth:`drop_bytes` forgot (the same file's)."""
        self._raw = raw

    def forget_positions(self) -> None:
        """Drop the round-trip parse kept for positions (many objects; computed again on
        demand): a forked lint child does before it pickles the file (promptops/lint/halves.py)."""
        self._tree = None
        if hasattr(self, "_seen"):
            del self._seen

    def _noted(self) -> placing.Noted:
        """The positions the walks of this file's events read past on their way
        (:func:`placing._note`). Left unset until a walk, so a file pickled between
        processes (a forked validation half's) carries nothing more."""
        try:
            return self._seen
        except AttributeError:
            self._seen: placing.Noted = {}
            return self._seen

    def _positions(self) -> Any:
        if self._tree is None:
            self._tree = _mark_tree(self.text, self._raw, self._blocks)
        return self._tree

    def _walk(self, loc: Loc, *, key: bool) -> tuple[int, int, str | None]:
        """0-based line and column of the value at ``loc`` (or of its key), and the
        value's scalar style (None for a collection, or when ``loc`` goes further than the
        document: the nearest enclosing node's position is returned then)."""
        if self._events and self._tree is None:
            noted = self._noted()
            found = noted.get((loc, key))
            if found is not None:  # read past by an earlier walk
                return found
            self._events -= 1
            source = _utf8(self.text, self._raw)
            found = None if source is None else placing.placed(source, loc, key=key, noted=noted)
            if found is not None:
                return found
        tree = self._positions()
        if isinstance(tree, _Marks):
            line, col, marked = tree.walk(loc, key=key)
            return line, col, _style(marked)
        node, line, col = tree, 0, 0
        for i, step in enumerate(loc):
            lc = getattr(node, "lc", None)
            if lc is None:
                return line, col, None
            if isinstance(node, dict) and step in node:
                line, col = lc.key(step) if key and i == len(loc) - 1 else lc.value(step)
            elif isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node):
                line, col = lc.item(step)
            else:
                return line, col, None
            node = node[step]
        return line, col, _style(node)

    def position(self, loc: Loc, *, key: bool = False) -> tuple[int, int]:
        """1-based line and column of the value at ``loc`` (or of its key).

        Walks as deep as the document goes: a location inside a value of the wrong
        shape, or at a missing key, lands on the nearest enclosing node.
        """
        line, col, _ = self._walk(loc, key=key)
        return line + 1, col + 1

    def block_start(self, loc: Loc) -> tuple[int, int, bool]:
        """Where the text of a scalar at ``loc`` starts, for template line mapping.

        Returns (line, col, is_block): a literal/folded block starts on the line after
        its indicator, at the block's indentation.
        """
        line, col, style = self._walk(loc, key=False)
        line, col = line + 1, col + 1
        if style in ("|", ">"):
            nxt = splitlines_line(self.text, line) or ""  # the line after the indicator
            return line + 1, len(nxt) - len(nxt.lstrip(" ")) + 1, True
        return line, col, False


def _style(node: object) -> str | None:
    """A node's scalar style: libyaml's graph's, or the literal and folded strings of
    ruamel.yaml's round-trip tree."""
    if isinstance(node, _yaml().Node):
        style = getattr(node, "style", None)
        return style if isinstance(style, str) else None
    return {"LiteralScalarString": "|", "FoldedScalarString": ">"}.get(type(node).__name__)


def _yaml() -> Any:
    import yaml

    return yaml


def _mark_tree(text: str, raw: bytes | None = None,
               blocks: tuple[bodies.Block, ...] | None = None) -> object:
    """The document's nodes with their marks, for positions (``raw``: the bytes ``text``
    was decoded from, if kept; ``blocks``: the long literal blocks the parse of ``raw``
    cut, if known).

    libyaml's node graph (composed in C, no values constructed): ten times faster and a
    fifth of the memory of ruamel.yaml's round-trip tree, which took 9 s and 160 MB for a
    100,000-node file and gigabytes for the largest the limits allow. A file only
    ruamel.yaml parses gets the round-trip tree. Both carry the same libyaml-style marks.
    A file with long literal blocks is composed from its skeleton (:func:`_skeleton_marks`).
    """
    # libyaml reads a text's UTF-8 (CParser encodes a str first): the bytes read, or one
    # encoding for both the skeleton's cut and the whole file's compose, not a second
    # (issue 26, session 20: placing findings in real prompts, whose bytes a forked
    # validation half does not hand back). Not for a text that starts with a BOM.
    source = _utf8(text, raw)
    found = None if source is None else _skeleton_marks(text, raw, blocks, source)
    if found is not None:
        return found
    loader = _PositionLoader(text if source is None else source)
    try:
        return _Marks(loader.get_single_node())
    except _yaml().YAMLError:
        return _ruamel("rt").load(text)
    finally:
        loader.dispose()


_BOM = b"\xef\xbb\xbf"


def _utf8(text: str, raw: bytes | None) -> bytes | None:
    """The UTF-8 libyaml reads of ``text`` (``raw``, the bytes it was decoded from, when
    they hold no BOM; else its encoding); None for a text that starts with a BOM, which
    libyaml's reading of the text would drop and the skeleton's cut would not."""
    if text.startswith("\ufeff"):
        return None
    return raw if raw is not None and not raw.startswith(_BOM) else text.encode()


def _skeleton_marks(text: str, raw: bytes | None,
                    blocks: tuple[bodies.Block, ...] | None = None,
                    source: bytes | None = None) -> _Marks | None:
    """The marks of the file's skeleton (:func:`bodies.cut` with its lines kept: every
    node outside a long literal block on its own line and column), or None when there
    is no block to cut or the skeleton does not read each placeholder as the whole of its
    block (:func:`_whole`). libyaml scanned every byte of a 90 KB ``text: |`` body again to
    place one finding inside it: where no prompt text repeats, composing files again for
    their marks was a third of the rules' time on the file-per-prompt corpus (issue 26
    item 1, session 17; ``tests/pipeline/test_yaml_bodies.py`` holds every position
    equal to the whole file's). libyaml reads the same bytes it read from the text (which
    it encodes to UTF-8 first), but for a leading BOM: a text starting with one (a file
    with two) is composed whole. ``blocks``: what the parse of ``raw`` cut, the blocks
    this cuts too (:func:`bodies.skeleton`), so they are not looked for again; ``source``:
    ``text``'s UTF-8 (``raw`` without a BOM), if the caller made it."""
    if source is None:
        source = _utf8(text, raw)
        if source is None:
            return None
    cutting = (bodies.skeleton(raw, blocks, lines=True) if blocks is not None and source is raw
               else bodies.cut(source, lines=True))
    if cutting is None:
        return None
    loader = _PositionLoader(cutting[0])
    try:
        root = loader.get_single_node()
    except _yaml().YAMLError:
        return None
    finally:
        loader.dispose()
    marks = [read.rstrip("\n") for read, _ in cutting[1]]
    return _Marks(root) if root is not None and _whole(root, marks) else None


def _whole(root: Any, marks: list[str]) -> bool:
    """Whether each placeholder of ``marks`` is read once, as the whole of a literal block
    (less its final line breaks), and no other scalar (a key included) holds one, in a
    tree (a collection met twice, an alias, is not one): then the skeleton's blocks are
    the file's, and everything else is the file's own bytes."""
    y = _yaml()
    by_mark = {mark: k for k, mark in enumerate(marks)}
    found = [0] * len(marks)
    seen: set[int] = set()
    todo = [root]
    while todo:
        node = todo.pop()
        if isinstance(node, y.ScalarNode):
            if bodies.TEXT_TOKEN in node.value:
                k = by_mark.get(node.value.rstrip("\n"))
                if k is None or node.style != "|":
                    return False
                found[k] += 1
            continue
        if id(node) in seen:
            return False
        seen.add(id(node))
        if isinstance(node, y.MappingNode):
            for key, value in node.value:
                if isinstance(key, y.ScalarNode) and bodies.TEXT_TOKEN in key.value:
                    return False
                todo += (key, value)
        else:
            todo += node.value
    return found == [1] * len(marks)


class _PositionLoader(fastyaml.FastLoader):
    """libyaml's composer for positions: a node's tag is never read but a merge key's, so
    the Python ``resolve`` libyaml's composer calls for every untagged node (a tenth of
    composing a file of real prompts for its marks, issue 26 session 20) is ``slice``, a
    C callable taking the same three arguments: such a node's tag is ``slice(kind,
    value, implicit)``, and :func:`_merge` reads a merge key off it as the fast loader's
    resolvers would (a plain ``<<``)."""

    resolve = staticmethod(slice)  # type: ignore[assignment]


def _merge(node: object) -> bool:
    """Whether a key node of :class:`_PositionLoader`'s graph is a merge key: tagged
    ``!!merge``, or a plain ``<<`` (the fast loader's one resolver for ``<``)."""
    tag = getattr(node, "tag", None)
    if isinstance(tag, slice):
        return bool(tag.stop == "<<" and tag.step[0])
    return bool(tag == "tag:yaml.org,2002:merge")


class _Marks:
    """A libyaml node graph that answers "where is the value at this location?"."""

    def __init__(self, root: object) -> None:
        self.root = root
        self._maps: dict[int, dict[str, tuple[object, object]]] = {}

    def pairs(self, node: Any) -> dict[str, tuple[Any, Any]]:
        """key text -> (key node, value node) of a mapping node, merge keys resolved."""
        found = self._maps.get(id(node))
        if found is None:
            found = {}
            merged: list[object] = []
            for k, v in node.value:
                if _merge(k):
                    merged += v.value if isinstance(v, _yaml().SequenceNode) else [v]
                elif isinstance(k, _yaml().ScalarNode):
                    found.setdefault(k.value, (k, v))
            for base in merged:
                if isinstance(base, _yaml().MappingNode):
                    for name, pair in self.pairs(base).items():
                        found.setdefault(name, pair)
            self._maps[id(node)] = found
        return found

    def walk(self, loc: Loc, *, key: bool) -> tuple[int, int, object]:
        y = _yaml()
        node, line, col = self.root, 0, 0
        for i, step in enumerate(loc):
            if isinstance(node, y.MappingNode):
                pair = self.pairs(node).get(step if isinstance(step, str) else str(step))
                if pair is None:
                    return line, col, None
                mark = (pair[0] if key and i == len(loc) - 1 else pair[1]).start_mark
                node = pair[1]
            elif (isinstance(node, y.SequenceNode) and isinstance(step, int)
                  and 0 <= step < len(node.value)):
                node = node.value[step]
                mark = node.start_mark
            else:
                return line, col, None
            line, col = mark.line, mark.column
        return line, col, node


class YamlProblem(Exception):
    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        super().__init__(str(problem))


def decode(path: str, raw: bytes) -> str:
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        col = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise YamlProblem(Problem(path, line, col, "file is not valid UTF-8")) from exc
    return text


def load_yaml(path: str, raw: bytes) -> LoadedFile:
    """Parse one file; a syntax error becomes a positioned problem with a hint.

    libyaml reads the bytes first: a file it reads whole is valid UTF-8 (its reader
    refuses what Python's decoder refuses: bad sequences, surrogates, past U+10FFFF), so
    its text need not be decoded now (:class:`LoadedFile`). Anything else (a problem of
    any kind; bytes libyaml would read otherwise than their text, ``fast._as_decoded``)
    takes the one path that decodes first, so every problem is found, worded and placed
    as before: the UTF-8 check first, then the parse.
    """
    try:
        data, blocks = fastyaml.read_bytes(raw)
    except Exception:  # said again, in order, below
        pass
    else:
        return LoadedFile(path, None, data, raw=raw, blocks=blocks, composes=True)
    text = decode(path, raw)
    try:
        data = _parse(text, raw)
    except LimitExceeded as exc:
        raise YamlProblem(limit_problem(path, exc)) from None
    except Exception as exc:
        if not isinstance(exc, _marked_error()):
            raise
        raise YamlProblem(_yaml_problem(path, text, exc)) from exc
    return LoadedFile(path=path, text=text, data=data, raw=raw)


def limit_problem(path: str, exc: LimitExceeded) -> Problem:
    return Problem(path, exc.line, exc.col,
                   f"invalid YAML for a package: {exc.message} (limits: SECURITY.md)")


def _parse(text: str, raw: bytes | None) -> object:
    """``text``'s data; ``raw``: the bytes it was decoded from (``fastyaml.load``)."""
    try:
        return fastyaml.load(text, raw)
    except LimitExceeded:
        raise
    except Exception:  # any other refusal: let ruamel.yaml say what is wrong
        pass
    # ruamel.yaml's composer recurses (its C one on the C stack): its events, which
    # it produces without recursion, are checked first; MarkedYAMLError on bad syntax.
    yaml_limits.check_events(_ruamel("safe").parse(text))
    digits = yaml_limits.MAX_INT_DIGITS
    try:
        data = _ruamel("safe").load(text)
    except ValueError as exc:  # a decimal integer past Python's int-string limit
        raise LimitExceeded(*_first(text, f"[0-9_]{{{digits + 1},}}"),
                            yaml_limits.int_too_long()) from exc
    try:
        yaml_limits.check_ints(data)
    except LimitExceeded:  # hex or octal: as many bits need at least 3,500 digits
        raise LimitExceeded(*_first(text, "0[xXoO][0-9a-fA-F_]{3500,}"),
                            yaml_limits.int_too_long()) from None
    return data


def _first(text: str, pattern: str) -> tuple[int, int]:
    """Where ``pattern`` first matches in ``text``, 1-based (1, 1 if it does not)."""
    import re

    found = re.search(pattern, text)
    if found is None:
        return 1, 1
    line = text.count("\n", 0, found.start()) + 1
    return line, found.start() - (text.rfind("\n", 0, found.start()) + 1) + 1


def _yaml_problem(path: str, text: str, exc: object) -> Problem:
    """A parser's error, at the mistake and in plain words (yamlio.messages)."""
    from promptops.pipeline.yamlio.messages import yaml_syntax_message

    (line, col), message = yaml_syntax_message(text, exc)
    return Problem(path, line, col, message)
