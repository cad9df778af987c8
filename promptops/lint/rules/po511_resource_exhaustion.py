"""A template asks for more time or memory than a request is allowed.

Why: ``range(10**9)``, ``'x' * 10**8``, ``'%999999999s'``, ``'x'.ljust(10**9)``,
``|indent(10**8)``, ``|round(10**8, 'ceil')``, ``|batch(10**9, 'x')``,
``(5).to_bytes(10**10)``, a huge ``**`` or a macro that calls itself are refused by the
request budget (see ``SECURITY.md``), so the prompt fails on every request; in review
they are resource-exhaustion attempts. The sizes are worked out from the literals in the
template (``10**9`` included, without computing anything large) and compared with the
same limits the renderer enforces, the package's own ``limits`` included. A macro that
calls itself, directly or through other macros of the same template, is reported
whatever its base case: recursion is cut off at 100 nested calls, and
``{% for ... recursive %}`` walks a tree without it.

Measured on the real-prompt corpus: no finding in 78 prompts.

Fails::

    text: "{% for i in range(10**9) %}.{% endfor %}{{ 'x' * 10**8 }}"

Passes::

    text: "{% for i in range(3) %}.{% endfor %}{{ '-' * 40 }}"
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from jinja2 import nodes
from jinja2.sandbox import MAX_RANGE

from promptops.lint.problem import Hit
from promptops.lint.rules._common import package_limits
from promptops.lint.rules._jinja import position, template_sources
from promptops.sandbox import limits
from promptops.sandbox.limits import MAX_MACRO_DEPTH, MAX_OPERAND_RESULT, MAX_POWER_EXPONENT

if TYPE_CHECKING:
    from promptops.lint.context import LintContext


CODE, NAME, LEVEL, NEEDS = "PO511", "resource-exhaustion", "error", "package"

HUGE = math.inf  # an integer too large to compute here: over every limit
_WIDTH_METHODS = ("ljust", "rjust", "center", "zfill", "expandtabs", "to_bytes")


def fold(node: nodes.Node) -> Any:
    """The value of a constant expression, HUGE when too big to build; None if unknown."""
    if isinstance(node, nodes.Const):
        return node.value if isinstance(node.value, int | float | str) else None
    if isinstance(node, nodes.Neg | nodes.Pos):
        v = fold(node.node)
        return (-v if isinstance(node, nodes.Neg) else v) if _num(v) else None
    if isinstance(node, nodes.Tuple | nodes.List):
        return tuple(fold(item) for item in node.items)
    if isinstance(node, nodes.Add | nodes.Sub | nodes.Mul | nodes.Pow):
        left, right = fold(node.left), fold(node.right)
        if not (_num(left) and _num(right)):
            return None
        if HUGE in (abs(left), abs(right)):
            return HUGE
        return _arith(node, left, right)
    return None


def _num(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _arith(node: nodes.Node, left: Any, right: Any) -> Any:
    if isinstance(node, nodes.Add):
        return left + right
    if isinstance(node, nodes.Sub):
        return left - right
    if isinstance(node, nodes.Mul):
        if isinstance(left, int) and isinstance(right, int) and \
                left.bit_length() + right.bit_length() > limits.MAX_INT_BITS:
            return HUGE
        return left * right
    if abs(right) > MAX_POWER_EXPONENT:
        return HUGE
    if isinstance(left, int) and isinstance(right, int) and right > 0 and \
            left.bit_length() * right > limits.MAX_INT_BITS:
        return HUGE
    try:
        return left**right
    except (OverflowError, ZeroDivisionError):
        return HUGE


def _big(value: Any, limit: float) -> bool:
    return _num(value) and value > limit


def _show(value: Any) -> str:
    return "a huge number" if value == HUGE else str(value)


def _budget(check: Any, *args: Any) -> str | None:
    try:
        check(*args)
    except limits.BudgetExceeded as exc:
        return str(exc)
    return None


def _range_len(args: list[Any]) -> Any:
    if not 1 <= len(args) <= 3 or not all(_num(a) for a in args):
        return None
    if HUGE in [abs(a) for a in args[:2]] and not (len(args) == 3 and abs(args[2]) == HUGE):
        return HUGE
    if not all(isinstance(a, int) for a in args):
        return None  # range() refuses floats by itself
    start, stop, step = (0, *args, 1)[:3] if len(args) == 1 else (*args, 1)[:3]
    return max(0, -((start - stop) // step)) if step else None


# The node classes :func:`_sizes` looks at (each of its branches starts by testing one):
# calling it, a generator, for every node of a long template cost more than its findings'
# search on templates where no text repeats (issue 26, session 9).
_SIZED = (nodes.Pow, nodes.Mul, nodes.Mod, nodes.Filter, nodes.Call)


def _sizes(node: nodes.Node) -> Iterator[tuple[str, str]]:
    """(needle, message) of every over-budget operation this node is."""
    if isinstance(node, nodes.Pow | nodes.Mul):
        left, right = fold(node.left), fold(node.right)
        if fold(node) == HUGE and HUGE not in (left, right):
            op = "**" if isinstance(node, nodes.Pow) else "*"
            yield op, f"exponent {right} is over the limit {MAX_POWER_EXPONENT}" \
                if op == "**" and abs(right) > MAX_POWER_EXPONENT else \
                f"`{op}` builds an integer of more than {limits.MAX_INT_BITS} bits"
        if isinstance(node, nodes.Mul):
            for seq, count in ((left, right), (right, left)):
                size = (len(seq) if isinstance(seq, str | tuple) else 1) * count \
                    if _num(count) and not _num(seq) else 0
                if size > MAX_OPERAND_RESULT and seq != "" and seq != ():
                    yield "*", f"`*` repeats a sequence {_show(count)} times, over the " \
                               f"limit of {MAX_OPERAND_RESULT} items"
    elif isinstance(node, nodes.Mod) and isinstance(node.left, nodes.Const) and \
            isinstance(node.left.value, str):
        args = fold(node.right)
        found = _budget(limits.check_percent, node.left.value,
                        args if isinstance(args, tuple) else (args,))
        if found:
            yield "%", found
    elif isinstance(node, nodes.Filter):
        yield from _filter(node)
    elif isinstance(node, nodes.Call):
        yield from _call(node)


def _arg(node: nodes.Filter | nodes.Call, index: int, key: str) -> Any:
    for kw in node.kwargs:
        if kw.key == key:
            return fold(kw.value)
    return fold(node.args[index]) if len(node.args) > index else None


def _filter(node: nodes.Filter) -> Iterator[tuple[str, str]]:
    name = node.name
    if name == "format" and isinstance(node.node, nodes.Const) and \
            isinstance(node.node.value, str):
        found = _budget(limits.check_percent, node.node.value,
                        tuple(fold(a) for a in node.args))
        if found:
            yield name, found
    elif name in ("center", "indent") and _big(_arg(node, 0, "width"), _bound()):
        yield name, f"`{name}` width {_show(_arg(node, 0, 'width'))} is over the limit " \
                    f"{_bound()}"
    elif name == "round" and _num(_arg(node, 0, "precision")) and \
            abs(_arg(node, 0, "precision")) > limits.MAX_ROUND_DIGITS:
        yield name, f"`round` to {_show(_arg(node, 0, 'precision'))} digits is over the " \
                    f"limit {limits.MAX_ROUND_DIGITS}"
    elif name == "batch" and _big(_arg(node, 0, "linecount"), _bound()) and \
            (len(node.args) > 1 or any(kw.key == "fill_with" for kw in node.kwargs)):
        yield name, f"`batch` of {_show(_arg(node, 0, 'linecount'))} with fill_with is " \
                    f"over the limit {_bound()}"
    elif name == "slice" and _big(_arg(node, 0, "slices"), limits.MAX_SLICES):
        yield name, f"`slice` into {_show(_arg(node, 0, 'slices'))} parts is over the " \
                    f"limit {limits.MAX_SLICES}"
    elif name == "tojson" and _big(_arg(node, 0, "indent"), 64):
        yield name, f"`tojson` indent {_show(_arg(node, 0, 'indent'))} is over the limit 64"
    elif name == "wordwrap" and _num(_arg(node, 0, "width")) and _arg(node, 0, "width") < 1:
        yield name, "`wordwrap` width must be at least 1"


def _call(node: nodes.Call) -> Iterator[tuple[str, str]]:
    target = node.node
    if isinstance(target, nodes.Name) and target.name == "range":
        size = _range_len([fold(a) for a in node.args])
        if _big(size, MAX_RANGE):
            yield "range", f"`range` of {_show(size)} items is over the sandbox limit " \
                           f"{MAX_RANGE}"
    elif isinstance(target, nodes.Getattr) and target.attr in _WIDTH_METHODS:
        width = _arg(node, 0, {"expandtabs": "tabsize", "to_bytes": "length"}.get(
            target.attr, "width"))
        if _big(width, _bound()):
            yield f".{target.attr}", f"`{target.attr}` width {_show(width)} is over the limit " \
                               f"{_bound()}"
    elif isinstance(target, nodes.Getattr) and target.attr == "format" and \
            isinstance(target.node, nodes.Const) and isinstance(target.node.value, str):
        args = tuple(fold(a) for a in node.args)
        kwargs = {kw.key: fold(kw.value) for kw in node.kwargs}
        found = _budget(limits.check_format, target.node.value, args, kwargs)
        if found:
            yield ".format", found


def _recursive_calls(every: list[nodes.Node]) -> Iterator[tuple[nodes.Call, str, list[str]]]:
    """(call, macro, cycle) for the first call of each macro that leads back to it, in a
    template whose nodes are ``every`` (``ctx.nodes``: no walk of its own)."""
    macros = {m.name: m for m in every if isinstance(m, nodes.Macro)}
    calls: dict[str, list[tuple[nodes.Call, str]]] = {
        name: [(c, c.node.name) for c in m.find_all(nodes.Call)
               if isinstance(c.node, nodes.Name) and c.node.name in macros]
        for name, m in macros.items()
    }
    for name in macros:
        for call, callee in calls[name]:
            path = _path_back(calls, callee, name)
            if path is not None:
                yield call, name, path
                break


def _path_back(calls: dict[str, list[tuple[nodes.Call, str]]], start: str,
               goal: str) -> list[str] | None:
    todo, seen = [[start]], {start}
    while todo:
        path = todo.pop(0)
        if path[-1] == goal:
            return path
        for _, nxt in calls[path[-1]]:
            if nxt not in seen:
                seen.add(nxt)
                todo.append([*path, nxt])
    return None


def _bound() -> int:
    return limits.current().value_chars


def check(ctx: LintContext) -> Iterator[Hit]:
    with limits.Budget(package_limits(ctx), deadline=float("inf")):  # the package's bounds
        hits = list(_templates(ctx))
    yield from hits


def _walked(ctx: LintContext, kind: str, source: str
            ) -> tuple[list[tuple[int, str, str]], list[tuple[int, str, list[str]]]]:
    """(line, needle, message) of each over-budget operation in ``source`` and (line, macro,
    cycle) of each recursive macro call: a function of the text and the package's bounds,
    kept once per distinct text (``kind`` names the bounds) and computed once per template
    shape (the literals it folds are in its tags: :mod:`promptops.lint.shaped`); empty
    when it does not parse."""
    return ctx.shaped(kind, source, lambda ast: _found(ctx, ast), _read)


# the filters :func:`_filter` reads the arguments (or the string) of
_READ_FILTERS = frozenset({"format", "center", "indent", "round", "batch", "slice", "tojson",
                           "wordwrap"})


def _read(every: list[nodes.Node]) -> Iterator[nodes.Node]:
    """The literals :func:`_sizes` may fold or read: every one under an operation it
    sizes (``*``, ``**``, ``%``, a filter of :data:`_READ_FILTERS`, ``range`` or a method
    call); a literal elsewhere (``"case " ~ 7``, ``x | default(3)``) is not read."""
    for node in every:
        if isinstance(node, nodes.Pow | nodes.Mul | nodes.Mod) or (
                isinstance(node, nodes.Filter) and node.name in _READ_FILTERS) or (
                isinstance(node, nodes.Call) and (
                    isinstance(node.node, nodes.Getattr) or (
                        isinstance(node.node, nodes.Name) and node.node.name == "range"))):
            yield from node.find_all(nodes.Const)


def _found(ctx: LintContext, ast: nodes.Template | None
           ) -> tuple[list[tuple[int, str, str]], list[tuple[int, str, list[str]]]]:
    if ast is None:
        return [], []
    every = ctx.nodes(ast)
    return ([(node.lineno, *found) for node in every
             if isinstance(node, _SIZED) for found in _sizes(node)],
            [(call.lineno, name, cycle) for call, name, cycle in _recursive_calls(every)])


def _templates(ctx: LintContext) -> Iterator[Hit]:
    kind = f"{CODE} {package_limits(ctx)!r}"  # the answers under these bounds
    for path, loc, source in template_sources(ctx):
        sizes, recursive = ctx.memo(kind, source, lambda s: _walked(ctx, kind, s))
        seen: set[tuple[int, str]] = set()
        for lineno, needle, message in sizes:
            if (lineno, message) not in seen:
                seen.add((lineno, message))
                line, col = position(ctx, path, loc, lineno, needle,
                                     int(needle.startswith(".")))
                yield Hit(path, line, col, message)
        for call_line, name, cycle in recursive:
            through = f" through {' -> '.join(repr(c) for c in cycle[:-1])}" \
                if len(cycle) > 1 else ""
            line, col = position(ctx, path, loc, call_line, cycle[0])
            yield Hit(path, line, col, f"macro {name!r} calls itself{through}: render stops "
                                       f"recursion at {MAX_MACRO_DEPTH} nested calls")
