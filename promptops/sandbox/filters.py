"""Jinja's built-in filters and tests, each bounded before its one big C call.

Most built-ins are one C call over their input (``str()``, ``json.dumps``, ``sorted``,
``str.join``) or let an argument choose the size of the result (``center(10**9)``,
``batch(10**9, 'x')``, ``round(x, 10**8)`` computes ``10**(10**8)``). Each is wrapped
here so that the size of what it would produce, or the cost of what it would compare,
is checked against the request's budget first (see :mod:`promptops.sandbox.sizing`). Three are
replaced because their cost is not linear in their input and output:

* ``sum`` over lists or tuples is quadratic (each ``+`` copies the total so far): the
  same left fold is done by extending one list, giving identical results in linear time;
* ``pprint`` writes into a stream that stops at the bound, and refuses what it would
  print by memory address (a value containing itself) or order by address (dict keys of
  one type that cannot be compared);
* ``urlize`` backtracks quadratically on a run of trailing punctuation (``'.'*40000``
  takes 24 s in Jinja's own regex): words with a run over :data:`MAX_URLIZE_RUN` are
  refused.

Results are otherwise exactly Jinja's: the originals do the work once the checks pass.
"""

from __future__ import annotations

import builtins
import pprint
import re
from collections.abc import Callable, Generator, Iterable, Iterator, MutableMapping, Sized
from typing import Any

from jinja2.filters import make_attrgetter
from jinja2.nodes import EvalContext
from jinja2.utils import _PassArg

from promptops.sandbox import limits, sizing
from promptops.sandbox.limits import BudgetExceeded
from promptops.sandbox.outputbound import CASE_GROWTH

MAX_URLIZE_RUN = 1_000  # `.`, `,`, `)` or `>` in a row; Jinja's urlize is quadratic in it
MAX_SUM_BITS = 2_000_000_000  # bits of all integers one `sum` adds (0.1 s)
_RUN = re.compile(r"[).,>]+")
_SCALARS = (str, int, float, bool, type(None))

Filter = Callable[..., object]


def _offset(fn: Filter) -> int:
    """How many context/environment arguments come before the value."""
    return 1 if _PassArg.from_obj(fn) is not None else 0


def _keep_pass_arg(new: Filter, original: Filter) -> Filter:
    if hasattr(original, "jinja_pass_arg"):
        new.jinja_pass_arg = original.jinja_pass_arg  # type: ignore[attr-defined]
    return new


def _text_input(value: object, what: str) -> object:
    """A value a text filter would ``str()``: containers become their checked text."""
    if isinstance(value, _SCALARS):
        return value
    if hasattr(value, "__html__"):  # Markup, an imported template: their own text
        return value
    return sizing.to_text(value, what)


def _check_result(result: object, what: str) -> object:
    """Charge what a filter built; a generator of new lists (``slice``, ``batch``) as it
    goes (other generators, such as ``unique``'s, yield the items they were given)."""
    if type(result) is str:  # the usual case, without the ABC check of a Generator
        # Budget.built charges a string over 64 characters; a shorter one costs nothing
        return result if len(result) <= 64 else limits.current().built(result, what)
    if isinstance(result, Generator):
        return _charged(result, what) if what in ("`slice`", "`batch`") else result
    return limits.current().built(result, what)


def _charged(items: Iterator[object], what: str) -> Iterator[object]:
    budget = limits.current()
    for item in items:
        yield budget.built(item, what)


# ---- the replacements ----------------------------------------------------------------
def bounded_sum(environment: Any, iterable: Any, attribute: Any = None, start: Any = 0) -> object:
    """Jinja's ``sum``: the same left fold ``start + a + b ...``, linear for sequences."""
    if attribute is not None:
        iterable = map(make_attrgetter(environment, attribute), iterable)
    values: Any = iterable if type(iterable) in (list, tuple) else list(iterable)
    seq = (list, tuple)
    if type(start) not in seq and not any(type(v) in seq for v in values[:1]):
        if len(values) > 64:
            bits = builtins.sum(v.bit_length() for v in values if type(v) is int)
            if bits > MAX_SUM_BITS:
                raise BudgetExceeded(f"`sum` of integers of {bits} bits in all is over the "
                                     f"limit {MAX_SUM_BITS}")
        return builtins.sum(values, start)  # numbers: the built-in, for identical floats
    acc = start
    buf: list[object] | None = None  # acc, being extended in place: it is ours
    kind: object = list
    v: Any
    for v in values:
        if buf is not None and type(v) is kind:
            limits.current().grow(len(buf) + len(v), len(v), "`sum`")
            buf.extend(v)
            continue
        if buf is not None:
            acc, buf = (tuple(buf) if kind is tuple else buf), None
        if type(acc) in seq and type(v) is type(acc):
            kind = type(acc)
            limits.check_size(len(acc) + len(v), "`sum`")
            buf = [*acc, *v]
            continue
        acc = environment.call_binop(None, "+", acc, v)
    if buf is not None:
        acc = tuple(buf) if kind is tuple else buf
    return acc


class _BoundedStream:
    """pprint's output stream: raises once the text passes the bound."""

    def __init__(self, bound: int) -> None:
        self.parts: list[str] = []
        self.left = bound

    def write(self, text: str) -> None:
        self.left -= len(text)
        if self.left < 0:
            raise BudgetExceeded("`pprint` output is over the limit "
                                 f"{limits.current().value_chars}")
        self.parts.append(text)


class _Printer(pprint.PrettyPrinter):
    """``pprint.pformat`` (what Jinja calls), writing into a bounded stream."""

    def pformat(self, object: object) -> str:
        stream = _BoundedStream(limits.current().value_chars)
        self._format(object, stream, 0, 0, {}, 0)
        return "".join(stream.parts)


def bounded_pprint(value: object) -> str:
    walk = sizing.measure(value, "`pprint`", keys=True)
    if walk.unstable is not None:
        raise sizing._unstable(value, walk.unstable)
    if walk.cyclic:
        raise BudgetExceeded("`pprint` of a value that contains itself would print memory "
                             "addresses; print it with `string` instead")
    if walk.sort_trouble is not None:
        raise BudgetExceeded("`pprint` would order the keys of a dict by memory address "
                             "(tuple keys that cannot be compared); use `dictsort` or "
                             "`tojson` instead")
    limits.check_size(walk.size, "`pprint`")
    return _Printer().pformat(value)


# ---- the guards ----------------------------------------------------------------------
# Each guard sees the arguments the filter or test is called with (the value first, after
# any context argument) and raises BudgetExceeded before the original runs; a guard that
# returns a value hands the original that value instead (``sized`` lists an iterator once).
# Template values are whatever a template computes: guards take ``object`` and look.
Guard = Callable[..., object]


def _width(what: str) -> Guard:
    def check(value: object, w: object = 80, *args: object, **kwargs: object) -> None:
        if isinstance(w, int) and w > limits.current().value_chars:
            raise BudgetExceeded(f"{what} width {w} is over the limit "
                                 f"{limits.current().value_chars}")
    return check


def _indent(s: object, w: object = 4, *args: object, **kwargs: object) -> None:
    text = str(s)
    lines = text.count("\n") + 1
    if isinstance(w, int):
        limits.check_size(len(text) + lines * max(w, 0), "`indent`")
    elif isinstance(w, str):
        limits.check_size(len(text) + lines * len(w), "`indent`")


def _replace(s: object, old: object, new: object, count: object = None) -> None:
    limits.check_method(str(s), "replace", (str(old), str(new)), {})


def _slice(value: object, slices: object, fill_with: object = None) -> None:
    if isinstance(slices, int) and slices > limits.MAX_SLICES:
        raise BudgetExceeded(f"`slice` into {slices} parts is over the limit "
                             f"{limits.MAX_SLICES}")


def _batch(value: object, linecount: object, fill_with: object = None) -> None:
    if fill_with is not None and isinstance(linecount, int):
        limits.check_size(linecount, "`batch` with fill_with")


def _format(value: object, *args: object, **kwargs: object) -> None:
    limits.check_percent(str(value), kwargs or args)
    args_size = sizing.texts_size([*args, *kwargs.values()], "`format`")
    limits.check_size(len(str(value)) + args_size, "`format`")


def _tojson(value: object, indent: object = None) -> None:
    _width("`tojson` indent")(value, indent)
    if isinstance(indent, int) and indent > 64:
        raise BudgetExceeded(f"`tojson` indent {indent} is over the limit 64")
    walk = sizing.measure(value, "`tojson`", json=True)
    step = indent if isinstance(indent, int) else len(indent) if isinstance(
        indent, str) else 0
    extra = walk.lines * (1 + step * walk.depth) if indent is not None else 0
    limits.check_size(walk.size + extra, "`tojson`")


def _wordwrap(s: object, w: object = 79, *args: object, **kwargs: object) -> None:
    if isinstance(w, int) and w < 1:
        raise BudgetExceeded(f"`wordwrap` width must be at least 1, got {w}")
    limits.check_pieces(str(s), r"[\s-]+", "`wordwrap`", 2)


def _split_by(regex: str, per_match: int, what: str) -> Guard:
    """Filters that split their text into a list of words first."""
    def check(s: object, *args: object, **kwargs: object) -> None:
        limits.check_pieces(str(s), regex, what, per_match)
    return check


def _round(value: object, precision: object = 0, *args: object, **kwargs: object) -> None:
    if isinstance(precision, int) and abs(precision) > limits.MAX_ROUND_DIGITS:
        raise BudgetExceeded(f"`round` to {precision} digits is over the limit "
                             f"{limits.MAX_ROUND_DIGITS}")


def _urlize(value: object, *args: object, **kwargs: object) -> None:
    text = str(value)
    limits.check_pieces(text, r"\s+", "`urlize`", 2)
    if len(text) > MAX_URLIZE_RUN:
        longest = max((m.end() - m.start() for m in _RUN.finditer(text)), default=0)
        if longest > MAX_URLIZE_RUN:
            raise BudgetExceeded(
                f"`urlize` of a run of {longest} `.`, `,`, `)` or `>` characters is over "
                f"the limit {MAX_URLIZE_RUN} (Jinja's urlize is quadratic in it)")
    limits.check_size(3 * len(text), "`urlize`")


def _escape(value: object) -> None:
    if isinstance(value, str) and not hasattr(value, "__html__"):
        grow = 4 * (value.count("&") + value.count("<") + value.count(">")
                    + value.count('"') + value.count("'"))
        if grow:
            limits.check_size(len(value) + grow, "`escape`")


def _urlencode(value: object) -> None:
    if isinstance(value, str):
        limits.check_size(3 * len(value.encode("utf-8", "surrogatepass")), "`urlencode`")
    else:
        limits.check_size(12 * sizing.measure(value, "`urlencode`").size, "`urlencode`")


def _xmlattr(d: object, *args: object) -> None:
    sizing.measure(d, "`xmlattr`")


def _sized(name: str) -> Guard:
    """Sorting, hashing and comparing filters: bound the walk of what they compare,
    and the number of items of a sort (n log n compares in one C call)."""
    def check(value: object, *args: object, **kwargs: object) -> object:
        if not isinstance(value, list | tuple | dict | str):
            value = list(value)  # type: ignore[call-overload]  # Jinja's own filter would
        assert isinstance(value, list | tuple | dict | str)
        if name in ("sort", "dictsort", "groupby"):
            limits.check_items(len(value), f"`{name}` of")
        sizing.check_operand(value, "comparing or hashing a value")
        return value
    return check


def _listing(value: object) -> None:
    if isinstance(value, Sized):
        limits.check_size(len(value), "`list`")


def _operands(a: object, b: object = None, *rest: object) -> None:
    sizing.check_operand(a, "comparing or hashing a value")
    sizing.check_operand(b, "comparing or hashing a value")


def _divisible(value: object, num: object = 1) -> None:
    limits.check_division(value, num, "`divisibleby`")


def _case(value: object) -> None:
    sizing.text_size(value, "a case test")


# (name, guard or None, text): a text filter ``str()``s its input, which is checked first.
FILTER_GUARDS: tuple[tuple[str, Guard | None, bool], ...] = (
    ("center", _width("`center`"), True), ("indent", _indent, True),
    ("replace", _replace, True), ("format", _format, True), ("wordwrap", _wordwrap, True),
    ("urlize", _urlize, True), ("escape", _escape, True), ("e", _escape, True),
    ("forceescape", _escape, True),
    *((name, None, True) for name in ("capitalize", "lower", "upper", "safe", "string",
                                      "striptags", "trim", "truncate")),
    ("title", _split_by(r"[-\s({\[<]+", 2, "`title`"), True),
    ("wordcount", _split_by(r"\w+", 1, "`wordcount`"), True),
    ("reverse", None, False),
    ("slice", _slice, False), ("batch", _batch, False), ("tojson", _tojson, False),
    ("round", _round, False), ("urlencode", _urlencode, False), ("xmlattr", _xmlattr, False),
    ("list", _listing, False),
    *((name, _sized(name), False) for name in ("sort", "dictsort", "unique", "groupby",
                                               "min", "max")),
)
COMPARISONS = ("==", "!=", "<", "<=", ">", ">=", "eq", "equalto", "ne", "lt", "lessthan",
               "le", "gt", "greaterthan", "ge", "in")
TEST_GUARDS: tuple[tuple[str, Guard], ...] = (
    *((name, _operands) for name in COMPARISONS),
    ("divisibleby", _divisible), ("lower", _case), ("upper", _case),
)


def _bounded_join(original: Filter) -> Filter:
    def bounded_join(eval_ctx: EvalContext, value: Iterable[object], d: object = "",
                     attribute: str | int | None = None) -> object:
        if attribute is not None:
            value = map(make_attrgetter(eval_ctx.environment, attribute), value)
        items = value if type(value) is list else list(value)
        sep = sizing.text_size(d, "`join`")
        limits.check_size(sizing.texts_size(items, "`join`") + sep * max(len(items) - 1, 0),
                          "`join`")
        return original(eval_ctx, items, d)
    return _keep_pass_arg(bounded_join, original)


def _str_method(original: Filter) -> Callable[[str], str] | None:
    """The ``str`` method Jinja's own filter ``original`` is, for a ``str`` value: its
    ``capitalize``, ``upper`` and ``lower`` are ``soft_str(s).<method>()``, and ``soft_str``
    of a ``str`` is the value itself. None for any other filter (or another Jinja's)."""
    from jinja2 import filters as jinja_filters

    methods: dict[object, Callable[[str], str]] = {
        jinja_filters.do_capitalize: str.capitalize, jinja_filters.do_upper: str.upper,
        jinja_filters.do_lower: str.lower}
    return methods.get(original)


def _wrap(table: MutableMapping[str, Filter], name: str, before: Guard | None, *,
          text: bool) -> None:
    """Replace ``table[name]`` by the original behind its guard, its result charged."""
    original = table[name]
    skip = _offset(original)
    what = f"`{name}`"

    method = _str_method(original) if text and before is None and not skip else None
    if method is not None:  # `capitalize`, `upper`, `lower` of a str: the str method
        def bounded_str(value: object, *args: object, **kwargs: object) -> object:
            if type(value) is str and not args and not kwargs:
                # Jinja's `soft_str(value).<method>()`, soft_str's `str` case written out:
                # two frames fewer a call
                text = method(value)
                return text if len(text) <= 64 else _check_result(text, what)
            if type(value) is not str:
                value = _text_input(value, what)
            result = original(value, *args, **kwargs)  # its own errors, e.g. extra args
            if type(result) is str and len(result) <= 64:  # _check_result's first case
                return result
            return _check_result(result, what)

        # a str in, no arguments: at most this many times its length out (outputbound),
        # and the str method that gives it (the code generator writes it inline)
        bounded_str.str_growth = CASE_GROWTH  # type: ignore[attr-defined]
        bounded_str.str_method = method.__name__  # type: ignore[attr-defined]
        table[name] = _keep_pass_arg(bounded_str, original)
        return

    if text and before is None and not skip:  # `trim`, `truncate`...: per-call fast
        def bounded_text(value: object, *args: object, **kwargs: object) -> object:
            if type(value) is not str:
                value = _text_input(value, what)
            result = original(value, *args, **kwargs)
            if type(result) is str and len(result) <= 64:  # _check_result's first case
                return result
            return _check_result(result, what)

        table[name] = _keep_pass_arg(bounded_text, original)
        return

    def bounded(*args: object, **kwargs: object) -> object:
        if text and len(args) > skip:
            args = (*args[:skip], _text_input(args[skip], what), *args[skip + 1:])
        if before is not None:
            replaced = before(*args[skip:], **kwargs)
            if replaced is not None:
                args = (*args[:skip], replaced, *args[skip + 1:])
        return _check_result(original(*args, **kwargs), what)

    table[name] = _keep_pass_arg(bounded, original)


def install(filters: MutableMapping[str, Filter], tests: MutableMapping[str, Filter]) -> None:
    """Bound every built-in filter and test that needs it (the tables above)."""
    filters["sum"] = _keep_pass_arg(bounded_sum, filters["sum"])
    filters["pprint"] = bounded_pprint
    filters["join"] = _bounded_join(filters["join"])
    for name, guard, text in FILTER_GUARDS:
        _wrap(filters, name, guard, text=text)
    for name, guard in TEST_GUARDS:
        if name in tests:
            _wrap(tests, name, guard, text=False)
