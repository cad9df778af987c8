"""Size checks that run *before* a template operation allocates.

Each function here answers "how big would the result be?" from the operands alone
(lengths, widths, counts), in constant or one-C-pass time, and raises
:class:`BudgetExceeded` instead of letting one C call build gigabytes. The render-wide
output cap in :mod:`promptops.templating` still applies afterwards; these checks exist
because memory is gone long before any output is produced.
"""

from __future__ import annotations

import re
from collections.abc import Callable, MutableMapping
from string import Formatter
from typing import Any

from jinja2.exceptions import SecurityError

MAX_VALUE = 4_000_000  # characters or elements one operation may produce
MAX_INT_BITS = 1_000_000
MAX_SLICES = 100_000  # the sandbox's own MAX_RANGE

# %[(key)][flags][width][.precision][length]type
_PERCENT = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?")
# [[fill]align][sign][z][#][0][width][grouping][.precision][type]
_SPEC = re.compile(r"(?:.?[<>=^])?[-+ ]?z?#?0?(\d*)[,_]?(?:\.(\d+))?")


class BudgetExceeded(SecurityError):
    """A template exceeded the render time or size budget."""


def check_size(size: int, what: str) -> None:
    if size > MAX_VALUE:
        raise BudgetExceeded(f"{what} would build {size} characters, over the limit {MAX_VALUE}")


def check_bits(bits: int, what: str) -> None:
    if bits > MAX_INT_BITS:
        raise BudgetExceeded(f"{what} would build a {bits}-bit integer, over {MAX_INT_BITS}")


def _width(value: Any, what: str) -> None:
    if isinstance(value, int) and value > MAX_VALUE:
        raise BudgetExceeded(f"{what} width {value} is over the limit {MAX_VALUE}")


def check_percent(fmt: str, args: Any) -> None:
    """``fmt % args``: every literal width/precision, and ``*`` widths taken from args."""
    if "%" not in fmt:
        return
    star = False
    for m in _PERCENT.finditer(fmt):
        for part in m.groups():
            if part == "*":
                star = True
            elif part:
                _width(int(part), "`%` format")
    if star and isinstance(args, tuple):
        for value in args:
            _width(value, "`%` format `*`")


def check_spec(spec: str) -> None:
    m = _SPEC.match(spec)
    if m is not None:
        for part in m.groups():
            if part:
                _width(int(part), "format spec")


def check_format(fmt: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """``fmt.format(...)``: literal spec widths, and nested ``{}`` widths once resolved."""
    for _, field, spec, _ in Formatter().parse(fmt):
        if field is None or not spec:
            continue
        if "{" in spec:  # a width taken from the arguments: check every integer argument
            for value in (*args, *kwargs.values()):
                _width(value, "format spec")
        else:
            check_spec(spec)


def check_method(owner: Any, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Methods of str/bytes/list whose result size is set by an argument, not the input."""
    if name in ("ljust", "rjust", "center", "zfill") and args:
        _width(args[0], f"`{name}`")
    elif name == "expandtabs":
        size = args[0] if args else kwargs.get("tabsize", 8)
        if isinstance(size, int) and size > 0:
            check_size(len(owner) + owner.count("\t" if isinstance(owner, str) else b"\t") * size,
                       "`expandtabs`")
    elif name == "replace" and len(args) >= 2:
        old, new = args[0], args[1]
        if isinstance(old, str | bytes) and isinstance(new, str | bytes) and len(new) > len(old):
            hits = owner.count(old) if old else len(owner) + 1
            check_size(len(owner) + hits * (len(new) - len(old)), "`replace`")
    elif name == "translate" and args and isinstance(args[0], dict):
        longest = max((len(v) for v in args[0].values() if isinstance(v, str)), default=1)
        if longest > 1:
            check_size(len(owner) * longest, "`translate`")
    elif name in ("extend", "__iadd__") and args and hasattr(args[0], "__len__"):
        check_size(len(owner) + len(args[0]), f"`{name}`")


def bound_filters(filters: MutableMapping[str, Callable[..., Any]]) -> None:
    """Wrap the built-in filters whose arguments choose how much they allocate."""

    def guard(name: str, check: Callable[..., None]) -> None:
        original = filters[name]

        def bounded(*args: Any, **kwargs: Any) -> Any:
            check(*args, **kwargs)
            return original(*args, **kwargs)

        for attr in ("jinja_pass_arg",):  # keep eval-context/environment passing
            if hasattr(original, attr):
                setattr(bounded, attr, getattr(original, attr))
        filters[name] = bounded

    def center(value: Any, width: Any = 80) -> None:
        _width(width, "`center`")

    def indent(s: Any, width: Any = 4, *args: Any, **kwargs: Any) -> None:
        if isinstance(width, int):
            lines = str(s).count("\n") + 1
            check_size(len(str(s)) + lines * max(width, 0), "`indent`")
        elif isinstance(width, str):
            check_size(len(str(s)) + (str(s).count("\n") + 1) * len(width), "`indent`")

    def replace(ctx: Any, s: Any, old: Any, new: Any, count: Any = None) -> None:
        text = str(s)
        check_method(text, "replace", (str(old), str(new)), {})

    def slice_(ctx: Any, value: Any, slices: Any, fill_with: Any = None) -> None:
        if isinstance(slices, int) and slices > MAX_SLICES:
            raise BudgetExceeded(f"`slice` into {slices} parts is over the limit {MAX_SLICES}")

    def fmt(value: Any, *args: Any, **kwargs: Any) -> None:
        check_percent(str(value), kwargs or args)

    def tojson(ctx: Any, value: Any, indent: Any = None) -> None:
        _width(indent, "`tojson` indent")
        if isinstance(indent, int) and indent > 64:
            raise BudgetExceeded(f"`tojson` indent {indent} is over the limit 64")

    def wordwrap(env: Any, s: Any, width: Any = 79, *args: Any, **kwargs: Any) -> None:
        if isinstance(width, int) and width < 1:
            raise BudgetExceeded(f"`wordwrap` width must be at least 1, got {width}")

    for name, check in (("center", center), ("indent", indent), ("replace", replace),
                        ("slice", slice_), ("format", fmt), ("tojson", tojson),
                        ("wordwrap", wordwrap)):
        if name in filters:
            guard(name, check)
