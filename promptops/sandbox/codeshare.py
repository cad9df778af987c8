"""Compiled template code kept once where templates hold it alike (issue 26's memory).

A served prompt keeps its templates' code for the life of the renderer, and most of that
code is not the template's own: 1,000 prompts of one shape held ~11 KB of code objects
each, of which only the bytecode, the texts and the constants' tuple are the template's.
The rest is the same in every template of a shape, or could be:

* the location table (``co_linetable``): Python keeps a line *and columns* for every
  instruction, ~40% of a template's code. The columns are those of Jinja's generated
  Python, never shown (Jinja rewrites a template's frames to the template's own lines),
  and they differ with every text's length, so no two templates shared a table. The
  table is rewritten with the lines alone, in the format Python itself writes without
  columns (``-X no_debug_ranges``; CPython's ``InternalDocs/locations.md``): each code
  unit keeps its line, so ``co_lines()``, ``tb_lineno``, tracing and Jinja's traceback
  rewriting read what they read before, and templates of one shape hold one table;
* the names (``co_names``), the exception table, tuples of names or numbers and every
  string constant: equal values, one object.

Code objects are immutable, so one object serving many is exact; nothing here touches the
bytecode or what a constant is. :class:`CodeParts` belongs to one environment (the parts it
keeps are those of the code that environment compiled) and keeps at most
:data:`MAX_PARTS`; past that, parts already kept are still shared. A Python whose table
does not read back the same (:func:`lines_only` is checked once per :class:`CodeParts`
against a sample that has every kind of entry) keeps its tables as compiled.
"""

from __future__ import annotations

from types import CodeType
from typing import TypeVar

_T = TypeVar("_T")

MAX_PARTS = 1 << 18  # shared values kept per environment: its templates' code bounds them
# the location table's entries (locations.md): a first byte of 1, a 4-bit kind and the
# code units covered less one (at most 8), then the kind's varints
_NO_COLUMNS = 0x80 | 13 << 3  # then the signed line delta
_NO_LOCATION = 0x80 | 15 << 3  # nothing more: no line (co_lines gives None)
_NONE_8 = bytes((_NO_LOCATION | 7,))
_SAME_8 = bytes((_NO_COLUMNS | 7, 0))
# code whose table has each kind of entry: lines going back and far ahead (a multi-byte
# delta), runs over 8 units, a line number of None (the `pass` of an exception handler
# that falls through), a nested function
_SAMPLE = ("def f(a):\n    for x in a:\n        try:\n            a = [a, x, a, x, a, x, a,"
           " x, a, x, a, x, a, x, a, x, a, x]\n        except Exception:\n            pass\n"
           + "\n" * 300 + "    return a\nf([1])\n")


def lines_only(code: CodeType) -> bytes:
    """``code``'s location table with the line of every code unit and no columns: each
    run of units on one line as few entries as the format allows (a loop over
    ``co_lines``: ~5% of a template's compile, where regular expressions over the table
    cost several times that)."""
    out = bytearray()
    last = code.co_firstlineno
    line: int | None = -1  # no run yet
    start = end = 0
    for s, e, at in code.co_lines():  # contiguous: each range starts where one ended
        if at != line:
            last = _run(out, (s - start) >> 1, line, last)
            line, start = at, s
        end = e
    _run(out, (end - start) >> 1, line, last)
    return bytes(out)


def _run(out: bytearray, units: int, line: int | None, last: int) -> int:
    """Append the entries of ``units`` code units on ``line`` (None: no line) after an
    entry whose line was ``last``; returns the line the next entry's delta is from."""
    if units <= 0:
        return last
    if line is None:
        full, rest = divmod(units, 8)
        out += _NONE_8 * full
        if rest:
            out.append(_NO_LOCATION | (rest - 1))
        return last
    first = min(units, 8)
    delta = line - last
    v = (-delta << 1) | 1 if delta < 0 else delta << 1  # the format's signed varint
    out.append(_NO_COLUMNS | (first - 1))
    while v >= 64:
        out.append(64 | (v & 63))
        v >>= 6
    out.append(v)
    full, rest = divmod(units - first, 8)
    out += _SAME_8 * full
    if rest:
        out += bytes((_NO_COLUMNS | (rest - 1), 0))
    return line


def _codes(code: CodeType) -> list[CodeType]:
    found = [code]
    for c in code.co_consts:
        if isinstance(c, CodeType):
            found += _codes(c)
    return found


def _unit_lines(code: CodeType) -> list[int | None]:
    return [p[0] for p in code.co_positions()]


class CodeParts:
    """The parts of compiled code that an environment's templates hold alike, kept once.

    :meth:`share` gives a code object equal to the one it is given but for its location
    table (lines alone), with each part that an earlier code held equal taken from that
    code."""

    def __init__(self) -> None:
        self._parts: dict[object, object] = {}
        self._lines: bool | None = None  # whether lines_only reads back: checked once

    def share(self, code: CodeType) -> CodeType:
        """``code`` with its parts shared (its functions' code too)."""
        if self._lines is None:
            self._lines = self._reads_back()
        return self._share(code)

    def _share(self, code: CodeType) -> CodeType:
        consts = tuple(self._share(c) if isinstance(c, CodeType) else self._const(c)
                       for c in code.co_consts)
        one = self._one
        return code.replace(
            co_consts=consts, co_names=one(code.co_names),
            co_linetable=one(lines_only(code) if self._lines else code.co_linetable),
            co_exceptiontable=one(code.co_exceptiontable))

    def _const(self, value: object) -> object:
        """The kept equal of a str, or of a tuple of str and int (nothing that compares
        equal to another type: no bool, no float), else ``value`` itself."""
        t = type(value)
        if t is str or (t is tuple and all(type(x) is str or type(x) is int
                                           for x in value)):  # type: ignore[attr-defined]
            return self._one(value)
        return value

    def _one(self, value: _T) -> _T:
        kept = self._parts.get(value)
        if kept is not None:
            return kept  # type: ignore[return-value]  # equal, and of value's type
        if len(self._parts) < MAX_PARTS:
            self._parts[value] = value
        return value

    def _reads_back(self) -> bool:
        """Whether this Python reads :func:`lines_only`'s tables as it reads its own: the
        same line for every code unit of :data:`_SAMPLE`'s code."""
        for code in _codes(compile(_SAMPLE, "<promptops lines>", "exec")):
            if _unit_lines(code.replace(co_linetable=lines_only(code))) != _unit_lines(code):
                return False
        return True
