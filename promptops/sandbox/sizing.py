"""How long a value's text would be, worked out before the text is built.

``str()``, ``tojson``, ``==`` and hashing walk a whole container in one C call that no
deadline interrupts, and a template can make that container far bigger than the memory
it occupies: ``[[[1]*100]*100]*100`` is 300 list objects and prints as three million
characters; forty passes of ``ns.x = [ns.x, ns.x]`` make 2**40. So before any such call
the value is *measured*: a walk over its distinct objects, memoised by ``id``, that adds
up the size of the text each would produce (so a part shared a million times is visited
once and counted a million times), stops as soon as the total passes the bound, and
notes what would make the text unstable. The walk is Python code, so the watchdog can
stop it; its cost is linear in the number of distinct objects, which the request's work
budget bounds.

The sizes are upper bounds, exact for short strings: a refused value is never smaller
than the bound by more than the escaping a long string could need.

Determinism lives here too: an object whose text is its memory address (a ``cycler``, a
generator, a bound method) makes a render depend on where the allocator put it, so a
value holding one is refused when printed, and so is a self-containing value for
``pprint`` (which prints ids for it) and a dict whose keys ``pprint`` would order by id.
"""

from __future__ import annotations

import json as _json
import sys
from typing import Any, TypeVar

from jinja2.environment import TemplateModule
from jinja2.exceptions import SecurityError
from jinja2.runtime import LoopContext, Macro, TemplateReference, Undefined
from jinja2.utils import Namespace

from promptops.sandbox import limits
from promptops.sandbox.limits import BudgetExceeded

_VIEWS = {type({}.keys()): 11, type({}.values()): 13, type({}.items()): 12}  # "dict_keys(...)"
_NAMED = (LoopContext, Macro, TemplateModule, TemplateReference, Undefined, type, range)
_EXACT = 256  # strings up to this length are measured exactly
_CONTROL = {c: None for c in range(32)} | {127: None}


class _Over(Exception):
    """Internal: the running total passed the limit; the walk stops early."""


class Walk:
    """One measurement of one value: text size, lines and depth (for indented JSON), and
    what would make the text unstable. Parts are measured once, by ``id``."""

    __slots__ = ("_busy", "_memo", "cyclic", "depth", "json", "keys", "limit", "lines", "size",
                 "sort_trouble", "unstable")

    def __init__(self, limit: float, *, json: bool = False, keys: bool = False) -> None:
        self.limit = limit
        self.json = json
        self.keys = keys  # look for dict keys pprint would order by id (sort_trouble)
        self.unstable: object = None  # the first part whose text carries an address
        self.cyclic = False
        self.sort_trouble: object = None  # a dict whose tuple keys cannot all be ordered
        self.size = self.lines = self.depth = 0  # of the last value measured (see measure())
        self._memo: dict[int, tuple[int, int, int]] = {}
        self._busy: set[int] = set()

    def measure(self, obj: Any) -> tuple[int, int, int]:
        """(characters, lines, depth) of ``repr(obj)`` (or ``json.dumps``)."""
        t = type(obj)
        if t is str:
            return self._str(obj), 1, 0
        if t is int:
            bits = obj.bit_length()
            return (len(repr(obj)) if bits < 64 else int(bits * 0.30103) + 2), 1, 0
        if t is bool or obj is None:
            return 5, 1, 0
        if t is float:
            return len(repr(obj)), 1, 0
        key = id(obj)
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        if key in self._busy:
            self.cyclic = True
            return 5, 1, 0
        self._busy.add(key)
        try:
            found = self._compound(obj, t)
        finally:
            self._busy.discard(key)
        if found[0] > self.limit:
            raise _Over
        self._memo[key] = found
        return found

    def _compound(self, obj: Any, t: type) -> tuple[int, int, int]:
        if isinstance(obj, str):  # Markup('...')
            return self._str(obj) + (0 if self.json else len(t.__name__) + 2), 1, 0
        if isinstance(obj, list | tuple):
            return self._items(obj, 2)
        if isinstance(obj, dict):
            return self._dict(obj, 2)
        if t in _VIEWS:
            size, lines, depth = self._items(list(obj), 2)
            return size + _VIEWS[t], lines, depth
        if isinstance(obj, Namespace):
            size, lines, depth = self._dict(object.__getattribute__(obj, "_Namespace__attrs"), 2)
            return size + 12, lines, depth
        if isinstance(obj, bytes | bytearray):
            return 4 * len(obj) + 14, 1, 0
        if isinstance(obj, _NAMED):
            return (len(repr(obj)) if not isinstance(obj, TemplateModule) else
                    len(repr(obj.__name__)) + 17), 1, 0
        if isinstance(obj, int | float):
            return 32, 1, 0
        if self.unstable is None:
            self.unstable = obj
        return 100, 1, 0

    def _items(self, items: Any, size: int) -> tuple[int, int, int]:
        lines = depth = 0
        for n, item in enumerate(items):
            s, ln, d = self.measure(item)
            size += s + 2
            lines += ln
            depth = max(depth, d)
            if not n & 1023 and size > self.limit:
                raise _Over
        return size, lines + 1, depth + 1

    def _dict(self, d: dict[object, object], size: int) -> tuple[int, int, int]:
        lines = depth = 0
        tuples = 0
        for n, (k, v) in enumerate(d.items()):
            ks, _, _ = self.measure(k)
            vs, ln, dv = self.measure(v)
            tuples += type(k) is tuple
            size += ks + vs + 4 + (2 * (type(k) is not str) if self.json else 0)
            lines += ln
            depth = max(depth, dv)
            if not n & 1023 and size > self.limit:
                raise _Over
        if self.keys and tuples > 1 and self.sort_trouble is None:
            if tuples > limits.MAX_SORT_ITEMS:
                self.sort_trouble = d
            else:
                try:
                    sorted(k for k in d if type(k) is tuple)
                except TypeError:
                    self.sort_trouble = d
        return size, lines + 1, depth + 1

    def _str(self, s: str) -> int:
        n = len(s)
        if n <= _EXACT:
            if not self.json:
                return len(repr(s))
            size = len(_json.dumps(s))
        elif not self.json:
            if s.isprintable():
                return n + 2 + s.count("\\") + s.count("'")
            return 10 * n + 2 if not s.isascii() else 4 * n + 2
        else:
            size = n + 2 + s.count('"') + s.count("\\")
            if not s.isascii():
                size += 5 * (len(s.encode("utf-8", "surrogatepass")) - n)
            if not s.isprintable():
                size += 5 * (n - len(s.translate(_CONTROL)))
        return size + 5 * (s.count("<") + s.count(">") + s.count("&") + s.count("'"))


def measure(value: object, what: str, *, json: bool = False, limit: float | None = None,
            walk: Walk | None = None, keys: bool = False) -> Walk:
    """Walk ``value``; BudgetExceeded if its text would pass the bound (default: one value).

    The walk's ``size``, ``lines`` and ``depth`` describe ``value``; passing the same
    ``walk`` for several values measures the parts they share once.
    """
    bound = limits.current().value_chars if limit is None else limit
    if walk is None:
        walk = Walk(bound, json=json, keys=keys)
    try:
        walk.size, walk.lines, walk.depth = walk.measure(value)
    except _Over:
        raise BudgetExceeded(f"{what} would build more than {walk.limit} characters") from None
    except RecursionError:
        raise BudgetExceeded(f"{what}: the value is nested too deeply") from None
    if walk.size > walk.limit:
        raise BudgetExceeded(f"{what} would build {walk.size} characters, over the limit "
                             f"{walk.limit}")
    return walk


def _unstable(value: object, part: object) -> SecurityError:
    holding = "" if part is value else f" holding a {type(part).__name__}"
    return SecurityError(f"cannot print a {type(value).__name__}{holding}: its text carries "
                         "a memory address and would change on every run")


def _refuse_callable(value: object) -> SecurityError:
    name = getattr(value, "__name__", "")
    return SecurityError(f"cannot print {type(value).__name__} {name!s}: a function has no "
                         "stable text (missing call parentheses?)".replace(" :", ":"))


def text_size(value: Any, what: str = "printing") -> int:
    """``len(str(value))``, at most: refuses a text that is unstable or over the bound."""
    t = type(value)
    if t is str:
        return len(value)
    if t is int:
        if value.bit_length() > 15_000 and sys.get_int_max_str_digits() == 0:
            raise BudgetExceeded(f"{what}: an integer of {value.bit_length()} bits")
        return int(value.bit_length() * 0.30103) + 2
    if t is float or t is bool or value is None or isinstance(value, str | Undefined):
        return 24 if not isinstance(value, str) else len(value)
    if isinstance(value, TemplateModule):
        return sum(map(len, value._body_stream))
    if callable(value):
        raise _refuse_callable(value)
    walk = measure(value, what)
    if walk.unstable is not None:
        raise _unstable(value, walk.unstable)
    return walk.size


def texts_size(items: Any, what: str) -> int:
    """``sum(len(str(x)) for x in items)`` at most, the parts the items share walked once."""
    walk = Walk(limits.current().value_chars)
    total = 0
    for item in items:
        if type(item) is str:
            total += len(item)
        elif isinstance(item, list | tuple | dict):
            measure(item, what, walk=walk)
            if walk.unstable is not None:
                raise _unstable(item, walk.unstable)
            total += walk.size
        else:
            total += text_size(item, what)
    return total


_T = TypeVar("_T")


def to_text(value: object, what: str = "printing") -> str:
    """``str(value)`` for output, after its size is checked and charged; a str unchanged."""
    if type(value) is str:
        return value
    size = text_size(value, what)
    if size > 64:
        limits.check_size(size, what)
    return value if isinstance(value, str) else str(value)


def check_operand(value: _T, what: str) -> _T:
    """A compare, hash or sort operand: its walk (``==`` on nested lists) is bounded."""
    t = type(value)
    if t is str or t is int or t is float or t is bool or value is None:
        return value
    if isinstance(value, list | tuple | dict | Namespace) or type(value) in _VIEWS:
        measure(value, what)
    return value
