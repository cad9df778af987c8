"""What package YAML may hold: bounded nesting, bounded alias expansion, bounded integers.

Every later stage walks the parsed data recursively (ruamel.yaml's round-trip composer
for positions, pydantic, ``json.dumps`` of the bundle), and ruamel.yaml's C composer
recurses on the C stack: 40,000 nested ``[`` killed the process with SIGSEGV, a few
thousand raised RecursionError. Aliases are expanded wherever the data is serialised,
so a 100 KB file of aliases to aliases became a 50 MB bundle ("billion laughs"). And
Python refuses to convert integers of more than 4,300 digits to or from text.

So, before anything recursive runs, a document is checked against these limits
(documented in SECURITY.md, "What package YAML may hold"):

* :data:`MAX_DEPTH` collections (mappings, sequences) nested inside each other,
  counting through aliases (an alias of a 90-deep anchor at depth 20 is 110 deep);
* :data:`MAX_NODES` nodes (scalars, mappings, sequences; an alias counts as all the
  nodes it repeats): every stage costs per node, ruamel.yaml's round-trip tree about
  1 KB and 90 us each, so 10 MB of small nested values took 8 minutes and 7 GB;
* :data:`MAX_ALIAS_EXPANSION`: the characters (plus one per node) that aliases may
  repeat in total, so a document expands to at most its own size plus this much;
  a recursive alias (an anchor containing itself) is refused outright;
* :data:`MAX_INT_DIGITS` digits for an integer (the bit length equivalent in hex/octal).

The check costs nearly nothing on ordinary files: every collection needs an indicator
character of its own (``:``, ``-``, ``?``, ``[``, ``{``), every node one of those or a
``,``, and every alias a ``*``, so a file with few of them cannot break a limit and is not
walked (:func:`needs_check`). Others are walked once, without recursion: the libyaml
node graph on the fast path (:func:`check_nodes`), or the parser's event stream
(:func:`check_events`; both parsers produce events without recursion), which stops at
the first limit crossed and so costs at most the limit, whatever the file's size: it
runs before composing on the fast path when a file could hold too many nodes, and
always on the ruamel.yaml fallback.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol


class Mark(Protocol):
    """A parser position, PyYAML's or ruamel.yaml's (0-based)."""

    @property
    def line(self) -> int: ...
    @property
    def column(self) -> int: ...


class Node(Protocol):
    """A composed node, PyYAML's or ruamel.yaml's: a scalar's value is text, a
    collection's a list of nodes (a mapping's, of key/value pairs)."""

    @property
    def value(self) -> object: ...
    @property
    def start_mark(self) -> Mark: ...


class Event(Protocol):
    """A parser event, PyYAML's or ruamel.yaml's; told apart by its class name (the
    anchor and a scalar's value are read where the kind has them)."""

    @property
    def start_mark(self) -> Mark | None: ...


class _Frame:
    """An open collection while checking events: its expanded size, height, expanded
    node count and anchor."""

    __slots__ = ("anchor", "count", "height", "size")

    def __init__(self, anchor: str | None) -> None:
        self.size, self.height, self.count, self.anchor = 1, 0, 1, anchor

MAX_DEPTH = 100
MAX_NODES = 250_000
MAX_ALIAS_EXPANSION = 1_000_000
MAX_INT_DIGITS = 4_300
TOO_BIG = 10**MAX_INT_DIGITS  # the smallest magnitude with more digits than the limit

TOO_DEEP = f"collections nested more than {MAX_DEPTH} levels deep"
RECURSIVE = "a recursive alias (an anchor that contains itself)"
TOO_MANY = (f"more than {MAX_NODES:,} nodes (values, mappings and sequences, aliases "
            "expanded)")
ALIASES = (f"aliases repeat more than {MAX_ALIAS_EXPANSION:,} characters in all (expanded, "
           "a small file would become a huge bundle)")


class LimitExceeded(Exception):
    """A document over one of the limits, at a 1-based line and column."""

    def __init__(self, line: int, col: int, message: str) -> None:
        super().__init__(f"{line}:{col}: {message}")
        self.line, self.col, self.message = line, col, message


def at(mark: Mark | None, message: str) -> LimitExceeded:
    """The limit error at a parser mark (0-based ``line``/``column``), or at 1:1."""
    if mark is None:
        return LimitExceeded(1, 1, message)
    return LimitExceeded(int(mark.line) + 1, int(mark.column) + 1, message)


Counts = tuple[bool, bool, bool]  # what needs_check says of a text

# every byte but the indicator characters needs_check counts (and the alias ``*``)
_NOT_INDICATORS = bytes(b for b in range(256) if b not in b":-[{?,*")


def needs_check(text: str | bytes) -> Counts:
    """(could the text nest past the limit, could it hold too many nodes, does it use
    aliases): bounds from counting characters, not a parse.

    Nested collections each own at least one indicator character, so their depth is
    at most the number of those characters; a mapping entry is two nodes per ``:``
    (or ``?``), any other node needs a ``-``, ``,``, ``[`` or ``{``; no ``*``, no alias.

    ``text`` may be the UTF-8 bytes it was decoded from (a BOM is no indicator): the
    indicators are ASCII, which UTF-8 encodes as themselves and never inside another
    character's bytes, so the counts are the text's. They are counted in one pass over
    bytes (deleting every other byte), not six over the text: on a 200 KB prompt with an
    emoji (two bytes a character in memory) the six took 1.5 ms, this 0.1 ms.
    """
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    found = raw.translate(None, _NOT_INDICATORS)  # the indicator bytes, in order
    commas, stars = found.count(b","), found.count(b"*")
    indicators = len(found) - commas - stars
    nodes = 2 * (indicators + commas) + 1
    return indicators >= MAX_DEPTH, nodes > MAX_NODES, stars > 0


def check_nodes(root: Node, text: str | bytes, counts: Counts | None = None) -> None:
    """Check a PyYAML node graph (aliases are shared nodes); LimitExceeded if over.
    ``counts``: :func:`needs_check` of ``text`` when the caller has it already."""
    deep, many, aliases = needs_check(text) if counts is None else counts
    if aliases:
        _check_graph(root)
    elif deep or many:
        _check_tree(root)


def _children(node: Node) -> list[Node]:
    value = node.value
    if not isinstance(value, list):
        return []
    if value and isinstance(value[0], tuple):
        return [n for pair in value for n in pair]
    return value


def _check_tree(root: Node) -> None:
    stack = [(root, 1)]
    count = 0
    while stack:
        node, depth = stack.pop()
        count += 1
        if count > MAX_NODES:
            raise at(node.start_mark, TOO_MANY)
        if isinstance(node.value, list):
            if depth > MAX_DEPTH:
                raise at(node.start_mark, TOO_DEEP)
            stack.extend((child, depth + 1) for child in _children(node))


def _check_graph(root: Node) -> None:
    """Depth and expanded size of a graph whose repeated nodes are aliases.

    Nodes are visited in document order, so an anchor is complete (its expanded size
    and height known) before any alias of it; meeting a node that is still open is a
    recursive alias.
    """
    size: dict[int, int] = {}
    height: dict[int, int] = {}
    nodes: dict[int, int] = {}
    opened: set[int] = set()
    added = total = 0
    stack: list[tuple[Node, int, bool, Mark | None]] = [(root, 1, False, None)]
    while stack:
        node, depth, leaving, parent_mark = stack.pop()
        key = id(node)
        if leaving:
            kids = _children(node)
            size[key] = 1 + sum(size[id(k)] for k in kids)
            height[key] = 1 + max((height[id(k)] for k in kids), default=0)
            nodes[key] = 1 + sum(nodes[id(k)] for k in kids)
            opened.discard(key)
            continue
        if key in size:  # seen before: this is an alias of it
            added += size[key]
            total += nodes[key]
            if added > MAX_ALIAS_EXPANSION:
                raise at(parent_mark, ALIASES)
            if total > MAX_NODES:
                raise at(parent_mark, TOO_MANY)
            if depth - 1 + height[key] > MAX_DEPTH:
                raise at(parent_mark, TOO_DEEP)
            continue
        if key in opened:
            raise at(parent_mark, RECURSIVE)
        total += 1
        if total > MAX_NODES:
            raise at(node.start_mark, TOO_MANY)
        if not isinstance(node.value, list):
            size[key], height[key], nodes[key] = len(str(node.value)) + 1, 0, 1
            continue
        if depth > MAX_DEPTH:
            raise at(node.start_mark, TOO_DEEP)
        opened.add(key)
        stack.append((node, depth, True, parent_mark))
        stack.extend((child, depth + 1, False, node.start_mark)
                     for child in reversed(_children(node)))


def check_events(events: Iterable[Event]) -> None:
    """Check a parser's event stream (PyYAML's or ruamel.yaml's); LimitExceeded if over."""
    frames: list[_Frame] = []
    anchors: dict[str, tuple[int, int, int]] = {}
    opened: set[str] = set()
    added = total = 0
    for event in events:
        kind = type(event).__name__
        anchor = getattr(event, "anchor", None)
        if kind in ("MappingStartEvent", "SequenceStartEvent"):
            total += 1
            if len(frames) >= MAX_DEPTH:
                raise at(event.start_mark, TOO_DEEP)
            if total > MAX_NODES:
                raise at(event.start_mark, TOO_MANY)
            frames.append(_Frame(anchor))
            if anchor:
                opened.add(anchor)
            continue
        if kind in ("MappingEndEvent", "SequenceEndEvent"):
            done = frames.pop()
            grown, tall, count, anchor = done.size, done.height + 1, done.count, done.anchor
            if anchor:
                anchors[anchor] = (grown, tall, count)
                opened.discard(anchor)
        elif kind == "ScalarEvent":
            grown, tall, count = len(getattr(event, "value", "")) + 1, 0, 1
            total += 1
            if total > MAX_NODES:
                raise at(event.start_mark, TOO_MANY)
            if anchor:
                anchors[anchor] = (grown, tall, count)
        elif kind == "AliasEvent":
            if anchor in opened:
                raise at(event.start_mark, RECURSIVE)
            grown, tall, count = anchors.get(anchor or "", (0, 0, 0))
            added += grown
            total += count
            if added > MAX_ALIAS_EXPANSION:
                raise at(event.start_mark, ALIASES)
            if total > MAX_NODES:
                raise at(event.start_mark, TOO_MANY)
            if len(frames) + tall > MAX_DEPTH:
                raise at(event.start_mark, TOO_DEEP)
        else:
            continue
        if frames:
            top = frames[-1]
            top.size += grown
            top.height = max(top.height, tall)
            top.count += count


def int_too_long(digits: int | None = None) -> str:
    """The refusal of an integer with ``digits`` digits (None: more than the limit)."""
    count = f"{digits:,}" if digits is not None else f"more than {MAX_INT_DIGITS:,}"
    return (f"an integer of {count} digits is over the limit of {MAX_INT_DIGITS:,}; "
            "quote it to keep it as text")


def too_big(number: int) -> bool:
    """Whether ``number`` has more decimal digits than the limit (it would not print)."""
    return number.bit_length() > 3 * MAX_INT_DIGITS and abs(number) >= TOO_BIG


def check_ints(data: object) -> None:
    """Refuse integers past the limit anywhere in parsed data (iteratively)."""
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, bool):
            continue
        if isinstance(item, int):
            if too_big(item):
                raise LimitExceeded(1, 1, int_too_long())
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple | set | frozenset):
            stack.extend(item)
