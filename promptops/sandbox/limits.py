"""The bounds of one request: its :class:`Budget`, and the size checks that spend from it.

A ``prompts/get`` renders several templates (every message, resource text and URI, the
result description); bounding each on its own let 790 bytes of YAML produce a 300 MB
reply. So one :class:`Budget` per request holds everything the request may still spend:

* **time**: the CPU time of the thread that renders, from the moment the request starts
  (argument validation and pattern matching included), enforced between bytecodes by
  :mod:`promptops.sandbox.watchdog`; the C calls the watchdog cannot interrupt are each bounded
  in size by the checks below, so none of them runs long. CPU time, not wall time: at load
  a legitimate render is descheduled past a wall deadline (flaky errors in CI). A served
  request (``Limits.served``) also has a wall backstop, :data:`WALL_BACKSTOP` times the
  bound, so a blocked or starved render still ends; offline commands have none. Without
  ``pthread_getcpuclockid`` (macOS, Windows) the bound stays wall time (SECURITY.md);
* **output**: characters of the whole reply, across all its parts;
* **work**: characters all the operations of the request may build, together
  (``WORK_FACTOR`` times the output bound; a list element counts as :data:`ELEMENT`
  characters), so a loop that keeps a big value alive on every pass runs out of budget
  instead of memory;
* **one value**: no single operation may build more than the output bound.

Each check here answers "how big would the result be?" from the operands alone (lengths,
widths, counts, bit lengths) and raises :class:`BudgetExceeded` *before* allocating. The
defaults can be changed per package (``limits:`` in ``promptops.yaml``), up to the hard
caps in this module: a package is untrusted, and its author must not be able to grant
itself unbounded resources.
"""

from __future__ import annotations

import functools
import re
import threading
import time
from collections.abc import Callable, Mapping, Sized
from typing import Any, TypeVar

from promptops.sandbox import watchdog
from promptops.sandbox.watchdog import _active as _watched
from promptops.sandbox.watchdog import _ident
from promptops.sandbox.watchdog import _lock as _watch_lock
from promptops.sandbox.watchdog import _wake as _watch_wake

DEFAULT_TIMEOUT_MS = 2_000
# A served request's wall-clock bound, in multiples of its CPU-time bound (2 s: 10 s)
WALL_BACKSTOP = 5
# Whether the watchdog can read a render thread's CPU clock (Linux, the BSDs); else the
# bound is wall time
CPU_CLOCKS = hasattr(time, "pthread_getcpuclockid")
MAX_TIMEOUT_MS = 10_000  # hard cap of `limits.renderTimeoutMs`
DEFAULT_OUTPUT_CHARS = 4_000_000
MAX_OUTPUT_CHARS = 16_000_000  # hard cap of `limits.maxOutputChars`
WORK_FACTOR = 16  # characters one request may build in all, per character of output bound
MAX_OPERAND_RESULT = 1_000_000  # elements or characters a single `*` may produce
MAX_INT_BITS = 1_000_000  # an integer result larger than this is refused
MAX_POWER_EXPONENT = 1_000
MAX_DIVISION_WORK = 1 << 36  # bits x bits of one integer division (quadratic in C)
MAX_SLICES = 100_000  # the sandbox's own MAX_RANGE
MAX_SORT_ITEMS = 100_000  # sorting is n log n compares in one C call: 400,000 take 0.4 s
MAX_PIECES = 500_000  # strings one split makes: each ~60 bytes, so at most ~30 MB at once
MAX_MACRO_DEPTH = 100
MAX_ROUND_DIGITS = 1_000  # |precision| of `round`: 10**precision is computed in C
ELEMENT = 32  # work one list, tuple or dict element costs: a pointer and, often, a new object
_CHARS = (str, bytes, bytearray)
_CONTAINERS = (list, tuple, dict, set, frozenset)
# The value bound when nothing says otherwise (lint of literal sizes, no active request).
MAX_VALUE = DEFAULT_OUTPUT_CHARS



@functools.cache
def _formats() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """Compiled on first use: serve imports this module on its cold path."""
    return (
        # %[(key)][flags][width][.precision][length]type
        re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?"),
        # [[fill]align][sign][z][#][0][width][grouping][.precision][type]
        re.compile(r"(?:.?[<>=^])?[-+ ]?z?#?0?(\d*)[,_]?(?:\.(\d+))?"),
    )


_monotonic = time.monotonic  # read per request and per template: one global, not two lookups
# the calling thread's CPU clock, read once per request (not read for a wall bound: its
# CPU bound is inf; and some platforms have no thread_time)
_thread_time = time.thread_time if CPU_CLOCKS else _monotonic
_INF = float("inf")


_T = TypeVar("_T")

class BudgetExceeded(Exception):
    """A request exceeded its time, output or size budget."""


class Limits:
    """The bounds a package's requests run under: its manifest's, within the hard caps."""

    __slots__ = ("backstop_s", "cpu_s", "max_output_chars", "render_timeout_ms", "served",
                 "timeout_s", "wall_s", "work_chars")

    def __init__(self, render_timeout_ms: int = DEFAULT_TIMEOUT_MS,
                 max_output_chars: int = DEFAULT_OUTPUT_CHARS, *,
                 served: Limits | None = None) -> None:
        self.render_timeout_ms = render_timeout_ms
        self.max_output_chars = max_output_chars
        # what every request's Budget reads, worked out once per package, not per request
        # (its CPU and wall bounds, inf: none, so Budget() only adds them)
        self.timeout_s = render_timeout_ms / 1000
        self.backstop_s = WALL_BACKSTOP * self.timeout_s
        self.work_chars = WORK_FACTOR * max_output_chars
        self.cpu_s = self.timeout_s if CPU_CLOCKS else _INF
        self.wall_s = (self.timeout_s if not CPU_CLOCKS  # wall time, served or not
                       else _INF if served is None else self.backstop_s)
        # the same bounds for a served request (with the wall backstop): serve's budgets
        self.served: Limits = self if served is not None else Limits(
            render_timeout_ms, max_output_chars, served=self)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Limits) and (
            self.render_timeout_ms, self.max_output_chars, self.wall_s) == (
            other.render_timeout_ms, other.max_output_chars, other.wall_s)

    def __hash__(self) -> int:
        return hash((self.render_timeout_ms, self.max_output_chars, self.wall_s))

    def __repr__(self) -> str:
        return f"Limits({self.render_timeout_ms}, {self.max_output_chars})"

    @classmethod
    def of(cls, config: Mapping[str, object] | None) -> Limits:
        """From a bundle's ``package.limits`` (camelCase keys), clamped to the hard caps."""
        if not isinstance(config, Mapping) or not config:
            return DEFAULTS
        return cls(_clamp(config.get("renderTimeoutMs"), DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS),
                   _clamp(config.get("maxOutputChars"), DEFAULT_OUTPUT_CHARS, MAX_OUTPUT_CHARS))

    @property
    def timeout_text(self) -> str:
        return f"{self.render_timeout_ms / 1000:g} s"

    @property
    def backstop_text(self) -> str:
        return f"{self.backstop_s:g} s"


DEFAULTS = Limits()


def _clamp(value: object, default: int, cap: int) -> int:
    """A bundle is checked by its schema; whatever it holds, never more than the cap."""
    if not isinstance(value, int) or isinstance(value, bool):
        return default
    return min(max(value, 1), cap)


class Budget:
    """What one request may still spend. Enter it (``with budget:``) around the request.

    While entered it is the calling thread's current budget (:func:`current`), which the
    template sandbox's hooks draw from, and the watchdog holds the thread to its deadline.
    Entering the same budget again (serve around a request, the renderer inside it) nests.

    Its time is the CPU time of the thread that made it (serve and the renderer make it in
    the thread that renders), from its making: :attr:`cpu_deadline` on that thread's CPU
    clock, :attr:`wall` the wall backstop (inf offline), :attr:`deadline` the earliest
    wall-clock moment the bound can be reached (a CPU clock runs no faster). The checks
    compare the wall clock with :attr:`deadline` and read the CPU clock (a system call)
    only once it has passed (:meth:`overrun`). An explicit ``deadline`` is a wall one.
    """

    __slots__ = ("_entered", "_outer", "_token", "cpu_deadline", "deadline", "depth", "fired",
                 "limits", "output_left", "value_chars", "wall", "work_left")

    def __init__(self, limits: Limits = DEFAULTS, *, deadline: float | None = None) -> None:
        self.limits = limits
        if deadline is None:
            now = _monotonic()
            self.deadline = now + limits.timeout_s
            self.cpu_deadline = _thread_time() + limits.cpu_s  # inf without CPU clocks
            self.wall = now + limits.wall_s  # inf offline with CPU clocks
        else:
            self.deadline = self.wall = deadline
            self.cpu_deadline = _INF
        self.output_left: float = limits.max_output_chars
        self.work_left: float = limits.work_chars
        self.value_chars = limits.max_output_chars
        self.depth = 0  # macro calls in progress
        self.fired = False  # the watchdog interrupted (or was about to interrupt) the request
        self._entered = 0
        self._outer: Budget | None = None
        self._token: list[float | bool] | None = None

    def __enter__(self) -> Budget:
        if _monotonic() > self.deadline:  # a budget handed in late, or the next template
            self.overrun()  # of a slow request
        self._entered += 1
        if self._entered == 1:
            self._outer = _local.budget
            _local.budget = self
            deadline = self.deadline
            if deadline != _INF:
                # watchdog.enter written out (one frame a request fewer; issue 26): the
                # thread's token registered first, then the alarm when it sleeps past this
                # deadline or has not started (its wake time is then inf)
                token: list[float | bool] = [deadline, False, self.cpu_deadline, self.wall]
                _watched[_ident()] = token
                self._token = token
                if deadline < _watch_wake[0]:
                    watchdog.wake()
        return self

    def __exit__(self, kind: object, value: object, tb: object) -> None:
        self._entered -= 1
        if self._entered:
            return
        # release() and watchdog.leave written out, for the usual exit (two frames fewer a
        # request; issue 26); a timeout delivered in here is finished by settle()'s release()
        token = self._token
        if token is not None:
            tid = _ident()
            with _watch_lock:
                if _watched.get(tid) is token:
                    del _watched[tid]
                fired = token[1]
                if fired:
                    watchdog.cancel(tid)  # not yet delivered: it must not escape the request
            self.fired = bool(fired) or self.fired
            self._token = None
        if _local.budget is self:
            _local.budget = self._outer
        self._entered = 0
        if kind is None and self.fired:  # finished, but past the deadline
            raise BudgetExceeded(self.late())

    def release(self) -> None:
        """Leave the watchdog and restore the outer budget; safe to call again (a timeout
        delivered inside this very call leaves it half done: the caller calls it again)."""
        if self._token is not None:
            self.fired = watchdog.leave(self._token) or self.fired
            self._token = None
        if _local.budget is self:
            _local.budget = self._outer
        self._entered = 0

    def settle(self) -> None:
        """After a timeout escaped ``with budget:``: finish a release it may have cut short."""
        if self._entered <= 0:
            self.release()

    def late(self) -> str:
        if self.cpu_deadline != _INF and _monotonic() > self.wall:
            return (f"render took longer than {self.limits.backstop_text} of wall time "
                    f"(a served request's backstop, {WALL_BACKSTOP} x renderTimeoutMs)")
        return f"render took longer than {self.limits.timeout_text}"

    def check_time(self) -> None:
        if _monotonic() > self.deadline:
            self.overrun()

    def overrun(self) -> None:
        """The wall clock has passed :attr:`deadline`: raise if the request is over its
        bound (its CPU time, or the wall backstop), else move :attr:`deadline` (and the
        watchdog's copy) to the next moment it can be."""
        now = _monotonic()
        if now > self.wall:
            raise BudgetExceeded(self.late())
        left = self.cpu_deadline - _thread_time() if self.cpu_deadline != _INF else _INF
        if left <= 0:
            raise BudgetExceeded(self.late())
        self.deadline = min(now + left, self.wall)
        token = self._token
        if token is not None:
            token[0] = self.deadline

    def spend(self, size: int, what: str, weight: int = 1) -> None:
        """One operation is about to build ``size`` characters, or elements (``weight``
        :data:`ELEMENT`: a pointer, and often a new object such as the ints of a range)."""
        if size > self.value_chars:
            raise BudgetExceeded(
                f"{what} would build {size} characters, over the limit {self.value_chars}")
        self.work_left -= size * weight
        if self.work_left < 0:
            raise BudgetExceeded(
                f"{what}: the request has built more than "
                f"{WORK_FACTOR * self.limits.max_output_chars} characters in all, over its "
                f"work limit ({WORK_FACTOR} x maxOutputChars)")

    def grow(self, total: int, added: int, what: str) -> None:
        """A list grows in place to ``total``: the bound applies to it, the work to ``added``."""
        if total > self.value_chars:
            raise BudgetExceeded(
                f"{what} would build {total} characters, over the limit {self.value_chars}")
        self.spend(added, what, ELEMENT)

    def built(self, value: _T, what: str) -> _T:
        """Charge a value an operation has just built (a string or container its input
        bounds, such as ``upper``, ``split`` or a slice) and return it."""
        if isinstance(value, _CHARS):
            if len(value) > 64:
                self.spend(len(value), what)
        elif isinstance(value, _CONTAINERS) and len(value) > 8:
            self.spend(len(value), what, ELEMENT)
        return value

    def emit(self, size: int) -> None:
        """``size`` characters go into the reply."""
        self.output_left -= size
        if self.output_left < 0:
            raise BudgetExceeded(self.too_long())

    def too_long(self) -> str:
        return (f"the reply is over {self.limits.max_output_chars} characters (all messages, "
                "resources and the description together)")


class _Local(threading.local):
    budget: Budget | None = None


_local = _Local()
# Used when no request is running (constant folding while a template compiles, lint):
# sizes are still bounded, time and totals are not.
_IDLE = Budget(DEFAULTS, deadline=float("inf"))
_IDLE.work_left = _IDLE.output_left = float("inf")


def current() -> Budget:
    return _local.budget or _IDLE


def check_size(size: int, what: str, weight: int = 1) -> None:
    current().spend(size, what, weight)


def check_items(items: int, what: str) -> None:
    if items > MAX_SORT_ITEMS:
        raise BudgetExceeded(f"{what} {items} items is over the limit {MAX_SORT_ITEMS}")


def check_bits(bits: int, what: str) -> None:
    if bits > MAX_INT_BITS:
        raise BudgetExceeded(f"{what} would build a {bits}-bit integer, over {MAX_INT_BITS}")


def check_division(left: object, right: object, what: str) -> None:
    """``//`` and ``%`` of two integers cost bits x bits in one C call."""
    if isinstance(left, int) and isinstance(right, int):
        work = left.bit_length() * right.bit_length()
        if work > MAX_DIVISION_WORK:
            raise BudgetExceeded(
                f"{what} of a {left.bit_length()}-bit by a {right.bit_length()}-bit integer "
                "is over the division limit")


def _width(value: object, what: str) -> None:
    if isinstance(value, int) and value > current().value_chars:
        raise BudgetExceeded(f"{what} width {value} is over the limit {current().value_chars}")


def check_percent(fmt: str, args: object) -> None:
    """``fmt % args``: every literal width/precision, and ``*`` widths taken from args."""
    if "%" not in fmt:
        return
    star = False
    for m in _formats()[0].finditer(fmt):
        for part in m.groups():
            if part == "*":
                star = True
            elif part:
                _width(int(part), "`%` format")
    if star and isinstance(args, tuple):
        for value in args:
            _width(value, "`%` format `*`")


def check_spec(spec: str) -> None:
    m = _formats()[1].match(spec)
    if m is not None:
        for part in m.groups():
            if part:
                _width(int(part), "format spec")


def check_format(fmt: str, args: tuple[object, ...], kwargs: dict[str, object]) -> None:
    """``fmt.format(...)``: literal spec widths, and nested ``{}`` widths once resolved."""
    from string import Formatter

    for _, field, spec, _ in Formatter().parse(fmt):
        if field is None or not spec:
            continue
        if "{" in spec:  # a width taken from the arguments: check every integer argument
            for value in (*args, *kwargs.values()):
                _width(value, "format spec")
        else:
            check_spec(spec)


def check_method(owner: Any, name: str, args: tuple[object, ...],
                 kwargs: dict[str, object]) -> None:
    """Methods whose result size is set by an argument, not by the size of the input."""
    check = _METHOD_CHECKS.get(name)
    if check is not None:
        check(owner, name, args, kwargs)


def _padded(owner: Any, name: str, args: tuple[object, ...], kwargs: dict[str, object]) -> None:
    if args:
        _width(args[0], f"`{name}`")


def _expandtabs(owner: Any, name: str, args: tuple[object, ...],
                kwargs: dict[str, object]) -> None:
    size = args[0] if args else kwargs.get("tabsize", 8)
    if isinstance(size, int) and size > 0:
        check_size(len(owner) + owner.count("\t" if isinstance(owner, str) else b"\t") * size,
                   "`expandtabs`")


def _replace(owner: Any, name: str, args: tuple[object, ...], kwargs: dict[str, object]) -> None:
    if len(args) < 2:
        return
    old, new = args[0], args[1]
    if isinstance(old, str | bytes) and isinstance(new, str | bytes) and len(new) > len(old):
        hits = owner.count(old) if old else len(owner) + 1
        check_size(len(owner) + hits * (len(new) - len(old)), "`replace`")


def _translate(owner: Any, name: str, args: tuple[object, ...],
               kwargs: dict[str, object]) -> None:
    if args and isinstance(args[0], dict):
        longest = max((len(v) for v in args[0].values() if isinstance(v, str)), default=1)
        if longest > 1:
            check_size(len(owner) * longest, "`translate`")


def _extend(owner: Any, name: str, args: tuple[object, ...], kwargs: dict[str, object]) -> None:
    if args and isinstance(args[0], Sized):
        current().grow(len(owner) + len(args[0]), len(args[0]), f"`{name}`")


def _to_bytes(owner: Any, name: str, args: tuple[object, ...],
              kwargs: dict[str, object]) -> None:
    length = args[0] if args else kwargs.get("length", 1)
    if isinstance(length, int):
        check_size(length, "`to_bytes`")


def _hex(owner: Any, name: str, args: tuple[object, ...], kwargs: dict[str, object]) -> None:
    if isinstance(owner, bytes | bytearray):
        check_size(2 * len(owner), "`hex`")


def _split(owner: Any, name: str, args: tuple[object, ...], kwargs: dict[str, object]) -> None:
    if not isinstance(owner, str):
        return
    limit = args[1] if len(args) > 1 else kwargs.get("maxsplit", -1)
    if isinstance(limit, int) and 0 <= limit < MAX_PIECES:
        return
    sep = args[0] if args else kwargs.get("sep")
    if name == "splitlines":
        check_pieces(owner, _LINES, "`splitlines`")
    elif isinstance(sep, str) and sep:
        pieces = owner.count(sep) + 1
        if pieces > MAX_PIECES:
            raise BudgetExceeded(f"`{name}` into {pieces} pieces is over the limit "
                                 f"{MAX_PIECES}")
    else:
        check_pieces(owner, _SPACES, f"`{name}`")


_MethodCheck = Callable[[Any, str, tuple[object, ...], dict[str, object]], None]
_METHOD_CHECKS: dict[str, _MethodCheck] = {
    "ljust": _padded, "rjust": _padded, "center": _padded, "zfill": _padded,
    "expandtabs": _expandtabs, "replace": _replace, "translate": _translate,
    "extend": _extend, "__iadd__": _extend, "to_bytes": _to_bytes, "hex": _hex,
    "split": _split, "rsplit": _split, "splitlines": _split,
}


_SPACES = r"\s+"
_LINES = r"\r\n|[\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]"


def check_pieces(text: str, separators: str, what: str, per_match: int = 1) -> None:
    """A split of ``text`` at ``separators`` (a regex) makes at most MAX_PIECES strings.

    Counted without building anything: ``finditer`` yields one match at a time, and a
    text shorter than the limit cannot have more pieces than characters.
    """
    if len(text) < MAX_PIECES // per_match:
        return
    pieces = 1
    for _ in re.finditer(separators, text):
        pieces += per_match
        if pieces > MAX_PIECES:
            raise BudgetExceeded(f"{what} of a text into more than {MAX_PIECES} pieces is "
                                 "over the limit")
