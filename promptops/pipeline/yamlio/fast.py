"""The fast YAML path: PyYAML's libyaml parser with YAML 1.2 core-schema typing.

Measured on the 10,000-prompt benchmark package: ruamel.yaml's C safe loader takes
0.30 ms a file, PyYAML's CSafeLoader 0.10 ms; parsing is most of a build. PyYAML
resolves scalars by YAML 1.1 rules (``yes`` is true, ``1e3`` a string) and accepts
duplicate keys, so this loader swaps in the 1.2 core-schema resolvers ruamel.yaml
uses and refuses duplicates. Anything it cannot parse is re-parsed by ruamel.yaml, so
every reported problem reads the same whichever path found it, except a document over
the limits of :mod:`promptops.pipeline.yamlio.limits`, refused here (``LimitExceeded``) before it
is constructed: it must never reach a parser that recurses.

Most package files are plain trees of strings: :func:`load` builds those in one walk of
libyaml's node graph that also holds them to the limits (:func:`_plain`), instead of
PyYAML's generic constructor and a second walk for the limits; anything else in a document
(an alias, a tag, a merge or non-string key, a duplicate key, a limit crossed, an error)
sends it down the general path, which parses it again and answers as it always did.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Hashable

import yaml
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from promptops.pipeline.yamlio import bodies
from promptops.pipeline.yamlio.limits import (
    MAX_DEPTH,
    MAX_INT_DIGITS,
    MAX_NODES,
    TOO_DEEP,
    Counts,
    at,
    check_events,
    check_nodes,
    int_too_long,
    needs_check,
    too_big,
)

_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_INT = re.compile(r"^(?:[-+]?[0-9][0-9_]*|0o[0-7]+|0x[0-9a-fA-F]+)$")  # ruamel allows 1_000
_FLOAT = re.compile(
    r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)
_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")
_TIMESTAMP = re.compile(
    r"^(?:[0-9]{4}-[0-9]{2}-[0-9]{2}"
    r"|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}"
    r"(?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?)$"
)


class DuplicateKey(yaml.MarkedYAMLError):
    pass


STR_TAG, SEQ_TAG, MAP_TAG, NULL_TAG = (f"tag:yaml.org,2002:{kind}"
                                      for kind in ("str", "seq", "map", "null"))


class FastLoader(yaml.CSafeLoader):

    # libyaml's composer (PyYAML's C extension) calls these three for every node. This
    # loader has no path resolvers, so PyYAML's descend/ascend return at once, but each is
    # a Python call: C callables that do nothing stand in (they take the same arguments).
    descend_resolver = staticmethod(operator.is_)  # type: ignore[assignment]  # (parent, index)
    ascend_resolver = staticmethod(tuple)  # type: ignore[assignment]  # ()

    def resolve(self, kind: object, value: str, implicit: tuple[bool, bool]) -> object:
        """PyYAML's ``BaseResolver.resolve`` without the steps that never apply here (no
        path resolvers, no wildcard resolvers): the same tag for any node. (``value`` and
        ``implicit`` are typed for scalars: a collection's are None and a bool, unread.)"""
        if kind is ScalarNode:
            if implicit[0]:
                for tag, regexp in self.yaml_implicit_resolvers.get(value[:1], ()):
                    if regexp.match(value):
                        return tag
            return STR_TAG
        return SEQ_TAG if kind is SequenceNode else MAP_TAG

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False  # noqa: FBT001, FBT002  (PyYAML's signature)
                          ) -> dict[Hashable, object]:
        seen: set[object] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # merged keys may be overridden; only explicit keys must be unique
            key = self.construct_object(key_node, deep=True)
            try:
                duplicate = key in seen
            except TypeError:
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping", node.start_mark, "found unhashable key",
                    key_node.start_mark,
                ) from None
            if duplicate:
                raise DuplicateKey(
                    "while constructing a mapping", node.start_mark,
                    f'found duplicate key "{key}"', key_node.start_mark,
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        value = str(self.construct_scalar(node)).replace("_", "")
        if value.startswith("0o"):
            number = int(value[2:], 8)
        elif value.startswith("0x"):
            number = int(value[2:], 16)
        else:
            digits = len(value.lstrip("+-"))
            if digits > MAX_INT_DIGITS:  # int() itself would refuse, with a ValueError
                raise at(node.start_mark, int_too_long(digits))
            number = int(value, 10)
        if too_big(number):  # hex or octal: no digit limit when parsing, but when printed
            raise at(node.start_mark, int_too_long())
        return number


FastLoader.yaml_implicit_resolvers = {}  # replaced wholesale by the 1.2 core schema below
FastLoader.add_constructor("tag:yaml.org,2002:int", FastLoader.construct_yaml_int)
for _tag, _rx, _first in (
    ("tag:yaml.org,2002:bool", _BOOL, "tTfF"),
    ("tag:yaml.org,2002:int", _INT, "-+0123456789"),
    ("tag:yaml.org,2002:float", _FLOAT, "-+.0123456789"),
    ("tag:yaml.org,2002:null", _NULL, ["~", "n", "N", ""]),
    ("tag:yaml.org,2002:timestamp", _TIMESTAMP, "0123456789"),
    ("tag:yaml.org,2002:merge", re.compile(r"^<<$"), "<"),
):
    FastLoader.add_implicit_resolver(_tag, _rx, list(_first))


# The constructors of the typed scalars a prompt holds (``required: true``, ``maxTokens: 200``):
# :class:`_Walk` calls them directly. ``construct_object`` picks the same one from the tag and
# around the call only records the node for aliases (a node met twice leaves the walk) and
# for recursion (a scalar has none): 2.6% of a `diff`'s validation of `real` was that.
_SCALARS = {tag: FastLoader.yaml_constructors[tag]
            for tag in ("tag:yaml.org,2002:bool", "tag:yaml.org,2002:int",
                        "tag:yaml.org,2002:float")}


def load(text: str, raw: bytes | None = None) -> object:
    """Parse one document; yaml.YAMLError on anything wrong (the caller re-parses),
    LimitExceeded on a document over the limits (nothing else should parse it).

    ``raw``: the UTF-8 bytes ``text`` was decoded from (a BOM allowed), when the caller has
    them. libyaml then reads them as they are (given ``text``, PyYAML encodes it to UTF-8
    first: a copy of every file) and the limits count characters over them: the same
    marks, data and errors, since libyaml reads UTF-8 and skips a leading BOM.
    """
    source: str | bytes = text if raw is None or not _as_decoded(raw) else raw
    # A document has at most 2 * len(text) + 1 nodes (limits.needs_check), so a shorter one
    # cannot hold too many; a longer one is counted first (one pass over its bytes), and if
    # it cannot hold too many either it is built in the same one walk: a 200 KB prompt
    # no longer goes down the general path (its node graph walked for the limits, then
    # PyYAML's constructor), only because it is long.
    counts = None if 2 * len(text) + 1 <= MAX_NODES else needs_check(source)
    if counts is None or not counts[1]:
        try:
            return _one_walk(source, counts)
        except Exception:  # the general path parses it again and says what is wrong
            pass
    return _general(text, source, counts)


def _one_walk(source: str | bytes, counts: Counts | None) -> object:
    """The document of ``source`` (text, or its UTF-8 bytes) in one walk of its nodes;
    raises on anything that walk does not build. ``counts``: ``needs_check(source)``,
    when it was needed (a document that cannot hold too many nodes)."""
    loader = FastLoader(source)
    try:
        node = loader.get_single_node()
        if counts is not None:
            aliases = counts[2]
        else:  # an alias names an anchor (libyaml refuses an undefined one): both marks
            # written, or no node is met twice. "*" alone is in half the files of `real`
            # (Markdown's bold), whose walk then kept the id of every node (session 21)
            aliases = (("*" in source and "&" in source) if isinstance(source, str)
                       else (b"*" in source and b"&" in source))
        return None if node is None else _plain(loader, node, aliases=aliases)
    finally:
        loader.dispose()


_BOM = b"\xef\xbb\xbf"


def _as_decoded(raw: bytes) -> bool:
    """Whether libyaml reads ``raw`` as it reads the text ``raw.decode("utf-8-sig")``:
    not when it starts with a UTF-16 byte order mark (libyaml reads UTF-16; the decoder
    refuses it), nor with two UTF-8 ones (the decoder drops one, then PyYAML encodes
    the text, and libyaml drops the next as a stream's mark, which the bytes read as
    they are do not: one more ``\ufeff`` would stay in the data)."""
    return not raw.startswith((b"\xff\xfe", b"\xfe\xff", _BOM + _BOM))


def load_bytes(raw: bytes) -> object:
    """:func:`load` of the text ``raw`` (UTF-8, a BOM allowed) decodes to, for a plain
    tree within the limits, without decoding it: libyaml reads ``raw`` whole, so it is
    valid UTF-8 when this returns. Raises on anything else (a syntax error, a limit, a
    document the one walk does not build, a file that could hold too many nodes): the
    caller then decodes the text and :func:`load` says what it is."""
    return read_bytes(raw)[0]


def read_bytes(raw: bytes) -> tuple[object, tuple[bodies.Block, ...] | None]:
    """:func:`load_bytes`'s data, and the long literal blocks it cut (None: none), which
    placing a position in the file reads again (:func:`bodies.skeleton`)."""
    if not _as_decoded(raw):
        raise _NotPlain
    # Long literal blocks are read by bodies.cut, libyaml reads the rest (the skeleton):
    # the same data, or a ValueError and the caller parses the whole file
    cutting = bodies.cut(raw)
    source = raw if cutting is None else cutting[0]
    counts = None if 2 * len(source) + 1 <= MAX_NODES else needs_check(source)
    if counts is not None and counts[1]:
        raise _NotPlain
    data = _one_walk(source, counts)
    if cutting is None:
        return data, None
    return bodies.put_back(data, cutting[1]), cutting[2]


class _NotPlain(Exception):
    """The document needs the general path."""


def _plain(loader: FastLoader, root: yaml.Node, *, aliases: bool) -> object:
    """The data of a document that is a plain tree, checked against the limits as it is built.

    The same objects as PyYAML's constructor builds (``_general``), for documents that are
    trees of untagged mappings (string keys, each once), sequences and scalars, within the
    limits: strings and nulls directly, other scalars by the loader's own constructors.
    Anything else raises (:class:`_NotPlain`, or the constructor's error) and the caller takes
    the general path. ``aliases`` (the text has a ``*``): a node met twice is an alias.
    Recursion is bounded: a collection deeper than the limit stops the walk.
    """
    walk = _Walk(loader, aliases=aliases)
    walk.met([root])
    data = walk.value(root, 1)
    if walk.count > MAX_NODES:
        raise _NotPlain
    return data


class _Walk:
    """One document's walk (a class, not a closure: a closure that calls itself is a
    reference cycle, and 10,000 of them, each holding its loader, waited for the cycle
    collector: 1.1 s of a build). String scalars, most of the nodes, are read in their
    parent's loop; each collection counts and checks its children at once."""

    __slots__ = ("count", "loader", "seen")

    def __init__(self, loader: FastLoader, *, aliases: bool) -> None:
        self.loader = loader
        self.seen: set[int] | None = set() if aliases else None
        self.count = 0

    def met(self, nodes: list[yaml.Node]) -> None:
        """Count ``nodes``; with aliases possible, a node met before is one."""
        self.count += len(nodes)
        seen = self.seen
        if seen is not None:
            before = len(seen)
            seen.update(map(id, nodes))
            if len(seen) != before + len(nodes):
                raise _NotPlain

    def value(self, node: yaml.Node, depth: int) -> object:
        """Any node but a string scalar (the caller read those); ``depth``: its level."""
        kind, tag = type(node), node.tag
        if kind is ScalarNode:
            if tag == STR_TAG:
                return node.value
            if tag == NULL_TAG:
                return None
            direct = _SCALARS.get(tag)
            if direct is not None:  # what construct_object calls, without its bookkeeping
                return direct(self.loader, node)
            return self.loader.construct_object(node, deep=True)
        if depth > MAX_DEPTH:
            raise _NotPlain
        if kind is MappingNode and tag == MAP_TAG:
            pairs: list[tuple[yaml.Node, yaml.Node]] = node.value
            if self.seen is None:  # no alias possible: only counted, no list of the nodes
                self.count += 2 * len(pairs)
            else:
                self.met([n for pair in pairs for n in pair])
            out: dict[object, object] = {}
            for key_node, value_node in pairs:
                if type(key_node) is not ScalarNode or key_node.tag != STR_TAG:
                    raise _NotPlain  # merge keys, tagged and non-string keys
                key = key_node.value
                if key in out:
                    raise _NotPlain
                out[key] = (value_node.value if type(value_node) is ScalarNode
                            and value_node.tag == STR_TAG else self.value(value_node, depth + 1))
            return out
        if kind is SequenceNode and tag == SEQ_TAG:
            items: list[yaml.Node] = node.value
            self.met(items)
            return [n.value if type(n) is ScalarNode and n.tag == STR_TAG
                    else self.value(n, depth + 1) for n in items]
        raise _NotPlain


def _general(text: str, source: str | bytes | None = None,
             counts: Counts | None = None) -> object:
    """Any document: composed, held to the limits, then built by PyYAML's constructor.
    ``source``: ``text`` or its UTF-8 bytes (:func:`load`); ``counts``: ``needs_check``
    of it, when known."""
    loader = FastLoader(text if source is None else source)  # a safe loader subclass
    try:
        node = compose(loader, text if source is None else source, counts)
        return None if node is None else loader.construct_document(node)
    finally:
        loader.dispose()


def compose(loader: yaml.CSafeLoader, text: str | bytes,
            counts: Counts | None = None) -> yaml.Node | None:
    """The node graph of ``loader``'s single document (``text``, or the UTF-8 bytes the
    loader reads), checked against the limits; ``counts``: ``needs_check(text)`` if known.

    libyaml refuses more than 1,000 levels itself; that too is the depth limit, not a
    syntax error to hand to ruamel.yaml (whose C composer would recurse on it).
    """
    counts = needs_check(text) if counts is None else counts
    try:
        if counts[1]:  # maybe too many nodes: count them before composing any
            check_events(yaml.parse(text, Loader=yaml.CSafeLoader))
        node = loader.get_single_node()
    except yaml.YAMLError as exc:
        if "maximum nesting depth" in str(getattr(exc, "problem", "")):
            raise at(getattr(exc, "problem_mark", None), TOO_DEEP) from None
        raise
    if node is not None:
        check_nodes(node, text, counts)
    return node
