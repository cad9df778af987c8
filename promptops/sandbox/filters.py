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
from collections.abc import Callable, Generator, Iterator, MutableMapping
from typing import Any

from jinja2.filters import make_attrgetter
from jinja2.utils import _PassArg

from promptops.sandbox import limits, sizing
from promptops.sandbox.limits import BudgetExceeded

MAX_URLIZE_RUN = 1_000  # `.`, `,`, `)` or `>` in a row; Jinja's urlize is quadratic in it
MAX_SUM_BITS = 2_000_000_000  # bits of all integers one `sum` adds (0.1 s)
_RUN = re.compile(r"[).,>]+")
_SCALARS = (str, int, float, bool, type(None))

Filter = Callable[..., Any]


def _offset(fn: Filter) -> int:
    """How many context/environment arguments come before the value."""
    return 1 if _PassArg.from_obj(fn) is not None else 0


def _keep_pass_arg(new: Filter, original: Filter) -> Filter:
    if hasattr(original, "jinja_pass_arg"):
        new.jinja_pass_arg = original.jinja_pass_arg  # type: ignore[attr-defined]
    return new


def _text_input(value: Any, what: str) -> Any:
    """A value a text filter would ``str()``: containers become their checked text."""
    if isinstance(value, _SCALARS):
        return value
    if hasattr(value, "__html__"):  # Markup, an imported template: their own text
        return value
    return sizing.to_text(value, what)


def _check_result(result: Any, what: str) -> Any:
    """Charge what a filter built; a generator of new lists (``slice``, ``batch``) as it
    goes (other generators, such as ``unique``'s, yield the items they were given)."""
    if type(result) is str:  # the usual case, without the ABC check of a Generator
        # Budget.built charges a string over 64 characters; a shorter one costs nothing
        return result if len(result) <= 64 else limits.current().built(result, what)
    if isinstance(result, Generator):
        return _charged(result, what) if what in ("`slice`", "`batch`") else result
    return limits.current().built(result, what)


def _charged(items: Iterator[Any], what: str) -> Iterator[Any]:
    budget = limits.current()
    for item in items:
        yield budget.built(item, what)


# ---- the replacements ----------------------------------------------------------------
def bounded_sum(environment: Any, iterable: Any, attribute: Any = None, start: Any = 0) -> Any:
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
    buf: list[Any] | None = None  # acc, being extended in place: it is ours
    kind: Any = list
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

    def pformat(self, object: Any) -> str:
        stream = _BoundedStream(limits.current().value_chars)
        self._format(object, stream, 0, 0, {}, 0)
        return "".join(stream.parts)


def bounded_pprint(value: Any) -> str:
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
def install(filters: MutableMapping[str, Filter], tests: MutableMapping[str, Filter],
            environment: Any) -> None:
    """Bound every built-in filter and test of ``environment`` that needs it."""
    sum_filter = _keep_pass_arg(bounded_sum, filters["sum"])
    filters["sum"] = sum_filter
    filters["pprint"] = bounded_pprint
    original_join = filters["join"]

    def bounded_join(eval_ctx: Any, value: Any, d: Any = "", attribute: Any = None) -> str:
        if attribute is not None:
            value = map(make_attrgetter(eval_ctx.environment, attribute), value)
        items = value if type(value) is list else list(value)
        sep = sizing.text_size(d, "`join`")
        limits.check_size(sizing.texts_size(items, "`join`") + sep * max(len(items) - 1, 0),
                          "`join`")
        return original_join(eval_ctx, items, d)  # type: ignore[no-any-return]

    filters["join"] = _keep_pass_arg(bounded_join, original_join)

    def wrap(name: str, before: Callable[..., Any] | None = None, *,
             text: bool = False, table: MutableMapping[str, Filter] = filters) -> None:
        original = table[name]
        skip = _offset(original)
        what = f"`{name}`"

        if text and before is None and not skip:  # `capitalize`, `upper`...: per-call fast
            def bounded_text(value: Any, *args: Any, **kwargs: Any) -> Any:
                if type(value) is not str:
                    value = _text_input(value, what)
                result = original(value, *args, **kwargs)
                if type(result) is str and len(result) <= 64:  # _check_result's first case
                    return result
                return _check_result(result, what)

            table[name] = _keep_pass_arg(bounded_text, original)
            return

        def bounded(*args: Any, **kwargs: Any) -> Any:
            if text and len(args) > skip:
                args = (*args[:skip], _text_input(args[skip], what), *args[skip + 1:])
            if before is not None:
                replaced = before(*args[skip:], **kwargs)
                if replaced is not None:
                    args = (*args[:skip], replaced, *args[skip + 1:])
            return _check_result(original(*args, **kwargs), what)

        table[name] = _keep_pass_arg(bounded, original)

    def width(what: str) -> Callable[..., None]:
        def check(value: Any, w: Any = 80, *args: Any, **kwargs: Any) -> None:
            if isinstance(w, int) and w > limits.current().value_chars:
                raise BudgetExceeded(f"{what} width {w} is over the limit "
                                     f"{limits.current().value_chars}")
        return check

    def indent(s: Any, w: Any = 4, *args: Any, **kwargs: Any) -> None:
        text = str(s)
        lines = text.count("\n") + 1
        if isinstance(w, int):
            limits.check_size(len(text) + lines * max(w, 0), "`indent`")
        elif isinstance(w, str):
            limits.check_size(len(text) + lines * len(w), "`indent`")

    def replace(s: Any, old: Any, new: Any, count: Any = None) -> None:
        limits.check_method(str(s), "replace", (str(old), str(new)), {})

    def slice_(value: Any, slices: Any, fill_with: Any = None) -> None:
        if isinstance(slices, int) and slices > limits.MAX_SLICES:
            raise BudgetExceeded(f"`slice` into {slices} parts is over the limit "
                                 f"{limits.MAX_SLICES}")

    def batch(value: Any, linecount: Any, fill_with: Any = None) -> None:
        if fill_with is not None and isinstance(linecount, int):
            limits.check_size(linecount, "`batch` with fill_with")

    def fmt(value: Any, *args: Any, **kwargs: Any) -> None:
        limits.check_percent(str(value), kwargs or args)
        args_size = sizing.texts_size([*args, *kwargs.values()], "`format`")
        limits.check_size(len(str(value)) + args_size, "`format`")

    def tojson(value: Any, indent: Any = None) -> None:
        width("`tojson` indent")(value, indent)
        if isinstance(indent, int) and indent > 64:
            raise BudgetExceeded(f"`tojson` indent {indent} is over the limit 64")
        walk = sizing.measure(value, "`tojson`", json=True)
        step = indent if isinstance(indent, int) else len(indent) if isinstance(
            indent, str) else 0
        extra = walk.lines * (1 + step * walk.depth) if indent is not None else 0
        limits.check_size(walk.size + extra, "`tojson`")

    def wordwrap(s: Any, w: Any = 79, *args: Any, **kwargs: Any) -> None:
        if isinstance(w, int) and w < 1:
            raise BudgetExceeded(f"`wordwrap` width must be at least 1, got {w}")
        limits.check_pieces(str(s), r"[\s-]+", "`wordwrap`", 2)

    def split_by(regex: str, per_match: int, what: str) -> Callable[..., None]:
        """Filters that split their text into a list of words first."""
        def check(s: Any, *args: Any, **kwargs: Any) -> None:
            limits.check_pieces(str(s), regex, what, per_match)
        return check

    def rounding(value: Any, precision: Any = 0, *args: Any, **kwargs: Any) -> None:
        if isinstance(precision, int) and abs(precision) > limits.MAX_ROUND_DIGITS:
            raise BudgetExceeded(f"`round` to {precision} digits is over the limit "
                                 f"{limits.MAX_ROUND_DIGITS}")

    def urlize(value: Any, *args: Any, **kwargs: Any) -> None:
        text = str(value)
        limits.check_pieces(text, r"\s+", "`urlize`", 2)
        if len(text) > MAX_URLIZE_RUN:
            longest = max((m.end() - m.start() for m in _RUN.finditer(text)), default=0)
            if longest > MAX_URLIZE_RUN:
                raise BudgetExceeded(
                    f"`urlize` of a run of {longest} `.`, `,`, `)` or `>` characters is over "
                    f"the limit {MAX_URLIZE_RUN} (Jinja's urlize is quadratic in it)")
        limits.check_size(3 * len(text), "`urlize`")

    def escape(value: Any) -> None:
        if isinstance(value, str) and not hasattr(value, "__html__"):
            grow = 4 * (value.count("&") + value.count("<") + value.count(">")
                        + value.count('"') + value.count("'"))
            if grow:
                limits.check_size(len(value) + grow, "`escape`")

    def urlencode(value: Any) -> None:
        if isinstance(value, str):
            limits.check_size(3 * len(value.encode("utf-8", "surrogatepass")), "`urlencode`")
        else:
            limits.check_size(12 * sizing.measure(value, "`urlencode`").size, "`urlencode`")

    def xmlattr(d: Any, *args: Any) -> None:
        sizing.measure(d, "`xmlattr`")

    def sized(name: str) -> Callable[..., Any]:
        """Sorting, hashing and comparing filters: bound the walk of what they compare,
        and the number of items of a sort (n log n compares in one C call)."""
        def check(value: Any, *args: Any, **kwargs: Any) -> Any:
            if not isinstance(value, list | tuple | dict | str):
                value = list(value)
            if name in ("sort", "dictsort", "groupby"):
                limits.check_items(len(value), f"`{name}` of")
            sizing.check_operand(value, "comparing or hashing a value")
            return value
        return check

    def listing(value: Any) -> None:
        if hasattr(value, "__len__"):
            limits.check_size(len(value), "`list`")

    checks: list[tuple[str, Callable[..., Any]]]
    checks = [("center", width("`center`")), ("indent", indent),
                        ("replace", replace), ("format", fmt), ("wordwrap", wordwrap),
                        ("urlize", urlize), ("escape", escape), ("e", escape),
                        ("forceescape", escape)]
    for name, check in checks:
        wrap(name, check, text=True)
    for name in ("capitalize", "lower", "upper", "safe", "string", "striptags", "trim",
                 "truncate"):
        wrap(name, text=True)
    wrap("title", split_by(r"[-\s({\[<]+", 2, "`title`"), text=True)
    wrap("wordcount", split_by(r"\w+", 1, "`wordcount`"), text=True)
    wrap("reverse")
    checks = [("slice", slice_), ("batch", batch), ("tojson", tojson), ("round", rounding),
              ("urlencode", urlencode), ("xmlattr", xmlattr), ("list", listing)]
    for name, check in checks:
        wrap(name, check)
    for name in ("sort", "dictsort", "unique", "groupby", "min", "max"):
        wrap(name, sized(name))

    def operands(a: Any, b: Any = None, *rest: Any) -> None:
        sizing.check_operand(a, "comparing or hashing a value")
        sizing.check_operand(b, "comparing or hashing a value")

    def divisible(value: Any, num: Any = 1) -> None:
        limits.check_division(value, num, "`divisibleby`")

    def case(value: Any) -> None:
        sizing.text_size(value, "a case test")

    for name in ("==", "!=", "<", "<=", ">", ">=", "eq", "equalto", "ne", "lt", "lessthan",
                 "le", "gt", "greaterthan", "ge", "in"):
        if name in tests:
            wrap(name, operands, table=tests)
    wrap("divisibleby", divisible, table=tests)
    wrap("lower", case, table=tests)
    wrap("upper", case, table=tests)
