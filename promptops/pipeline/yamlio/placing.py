"""Where a value of a YAML file starts, read off libyaml's events up to it, not its graph.

Placing a lint finding asks where one value of a prompt file starts (its line and
column, and whether it is a literal block: :meth:`LoadedFile.block_start`). Composing
the whole file for that (:func:`promptops.pipeline.yamlio.loader._mark_tree`) scans every
byte of it and makes a Python node per value, though a finding in a prompt is most often
in its first message: on 5,000 real prompts with one finding each, composing them was a
fifth of the lint child of a ``diff`` (issue 26 item 1, session 21). libyaml's parser
gives its events one at a time, with the marks the composer copies onto its nodes, so
the walk down to the value reads the file up to that value and stops there.

It is exact or it declines (None: the caller composes the file as before). It answers
only what the composed graph answers the same way: every key on the way a plain scalar
(an alias there, an explicit ``!!merge`` key, a step named ``<<``: declined), the value
found at an explicit key, the first of that name as the graph's key table keeps it (a
key only a merge gives, or a missing one: declined), never an alias on the way. It must
be given a file libyaml composes whole (the caller's to know: a file the fast path read),
since it stops before the end and so never sees an error past the value.
"""

from __future__ import annotations

from collections.abc import Callable
from types import NoneType

from yaml import YAMLError
from yaml._yaml import CParser
from yaml.events import (
    AliasEvent,
    DocumentStartEvent,
    Event,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
)

Loc = tuple[str | int, ...]
Answer = tuple[int, int, str | None]  # what placed answers
# (location, key?) -> placed's answer, for locations a walk read past (_note)
Noted = dict[tuple[Loc, bool], Answer]
_MERGE = "tag:yaml.org,2002:merge"


class _Declined(Exception):
    """The events do not answer as the composed graph would: compose it."""


def placed(source: bytes, loc: Loc, *, key: bool,
           noted: Noted | None = None) -> Answer | None:
    """0-based (line, column) of the value at ``loc`` in ``source`` (of its key, with
    ``key``), and the value's scalar style (None for a collection), as
    :class:`~promptops.pipeline.yamlio.loader._Marks` finds them in the composed graph of
    ``source``; where ``loc`` goes further than the document, the nearest enclosing
    node's (line, column) and None, as it does. None: declined (the module docstring).
    ``noted``: where the walk adds what it reads past on its way (:func:`_note`)."""
    if not loc:
        return None
    parser = CParser(_Pieces(source))
    try:
        return _walk(parser.get_event, loc, key=key, noted=noted)
    except (_Declined, YAMLError):
        return None
    finally:
        parser.dispose()


class _Pieces:
    """``source`` handed to libyaml a piece at a time, each twice the last. Given bytes,
    libyaml's reader decodes its first 16 KB before the first event (3-4 ns a byte: 18 us
    of the 47 a walk to the first message of a 7 KB real prompt took), though the walk
    stops at a value near the file's start; read from a stream, it decodes what it has
    been given and asks for more only when its scanner needs it. libyaml reads any input
    this way (a file, a pipe), so the events and their marks are the same: only where the
    reading stops differs (tests/pipeline/test_yaml_placing.py holds both equal)."""

    __slots__ = ("_at", "_size", "_source")

    def __init__(self, source: bytes) -> None:
        self._source = source
        self._at = 0
        self._size = _FIRST_PIECE

    def read(self, size: int = 1 << 14, /) -> bytes:
        """At most ``size`` bytes (libyaml's free room), the next piece's size at most."""
        at, piece = self._at, min(self._size, size)
        self._size *= 2
        self._at = at + piece
        return self._source[at:at + piece]


_FIRST_PIECE = 512  # a walk to a real prompt's first message reads 300-600 bytes


# The events come one Python object each (a tenth of a microsecond apiece matters here:
# the walk is all there is), so they are told apart by their exact class (the parser
# makes no subclass) and read past in one loop, not a call per node.
_Get = Callable[[], "Event | None"]
_STARTS = (MappingStartEvent, SequenceStartEvent)
_ENDS = (MappingEndEvent, SequenceEndEvent)


def _walk(get: _Get, loc: Loc, *, key: bool, noted: Noted | None = None) -> Answer:
    get()  # the stream's start
    if type(get()) is not DocumentStartEvent:
        raise _Declined  # no document: the graph has no root
    node = get()
    line = col = 0
    for i, step in enumerate(loc):
        kind = type(node)
        if kind is MappingStartEvent:
            name_event, node = _value(get, step if isinstance(step, str) else str(step))
            mark = (name_event if key and i == len(loc) - 1 else node).start_mark
        elif kind is SequenceStartEvent and isinstance(step, int) and step >= 0:
            item = _item(get, step, loc[:i], noted)
            if item is None:
                return line, col, None
            node = item
            mark = node.start_mark
        else:
            return line, col, None
        if mark is None:
            raise _Declined
        line, col = mark.line, mark.column
    return line, col, node.style if type(node) is ScalarEvent else None


def _value(get: _Get, name: str) -> tuple[Event, Event]:
    """(the key's event, the value's first event) of the first plain key ``name`` of the
    mapping whose start was just read."""
    if name == "<<":
        raise _Declined  # a merge key, or a quoted one: the graph tells them apart
    while True:
        found = get()
        kind = type(found)
        if kind is ScalarEvent:
            assert isinstance(found, ScalarEvent)
            if found.value == name and found.tag != _MERGE:
                value = get()
                if value is None or type(value) is AliasEvent:
                    raise _Declined  # the graph's node is the anchored one, marked there
                return found, value
        elif kind in _STARTS:
            _skip(get, 1)  # a key that is a collection
        else:
            raise _Declined  # the mapping's end: missing (or merged in); an alias key
        value = get()
        if type(value) in _STARTS:
            _skip(get, 1)


def _item(get: _Get, index: int, at: Loc = (), noted: Noted | None = None) -> Event | None:
    """The first event of item ``index`` of the sequence at ``at`` whose start was just
    read; None when it has fewer items. A mapping read past is noted (:func:`_note`)."""
    for j in range(index):
        found = get()
        kind = type(found)
        if kind is MappingStartEvent and noted is not None:
            _note(get, (*at, j), noted)
        elif kind in _STARTS:
            _skip(get, 1)
        elif kind is SequenceEndEvent:
            return None
    found = get()
    kind = type(found)
    if found is None or kind is AliasEvent:
        raise _Declined
    return None if kind is SequenceEndEvent else found


def _note(get: _Get, at: Loc, noted: Noted) -> None:
    """Read past the mapping at ``at`` whose start was just read, noting what a walk to
    ``(*at, name)`` answers for each plain key ``name`` of it (the start and style of its
    value; with ``key``, of its key): :func:`_value` reading the same events, up to the
    first pair it declines at. The events are read anyway to get past the item: on 5,000
    real prompts, a finding in a prompt's second message (PO504) and then one in its first
    (PO509) walked the file twice (issue 26 item 1, session 22)."""
    names: set[str] = set()
    noting = True
    while True:
        found = get()
        kind = type(found)
        if kind is MappingEndEvent:
            return
        if kind is ScalarEvent:
            assert isinstance(found, ScalarEvent)
            value = get()
            name = found.value
            if noting and found.tag != _MERGE and name not in names:
                names.add(name)  # only the first of a name is _value's
                if name != "<<" and value is not None and type(value) is not AliasEvent:
                    style = value.style if type(value) is ScalarEvent else None
                    mark, at_key = value.start_mark, found.start_mark
                    if mark is not None and at_key is not None:
                        noted[(*at, name), False] = (mark.line, mark.column, style)
                        noted[(*at, name), True] = (at_key.line, at_key.column, style)
        elif kind in _STARTS:
            _skip(get, 1)  # a key that is a collection
            value = get()
        elif kind is AliasEvent:
            noting = False  # _value declines at an alias key every name not found before
            value = get()
        else:
            raise _Declined  # the stream ended inside the mapping
        if type(value) in _STARTS:
            _skip(get, 1)


def _skip(get: _Get, depth: int) -> None:
    """Read to the end of the collection ``depth`` levels up."""
    while depth:
        kind = type(get())
        if kind in _STARTS:
            depth += 1
        elif kind in _ENDS:
            depth -= 1
        elif kind is NoneType:
            raise _Declined
