"""An upper bound of a template's output, proved from its code before it runs.

A render counts every chunk against the reply's output bound before it keeps it
(:meth:`promptops.render.template.Compiled.render`): a template may print a value
that is any size, or loop over one, and the count stops it at the bound. Most prompt
templates print nothing of the kind: text, the string arguments (each within its
``maxLength``), a loop over a list written in the template, a count of that loop, a
case filter of a string. For such a template the length of its output is at most

    fixed + sum(times[name] * len(value of name))

when every named value is a ``str`` (a ``str`` prints as itself), and the render can
check that sum against what the request has left once, before it starts, instead of
counting 18 chunks (issue 26: ~380 bytecodes a ``prompts/get``). Where the sum is over
what is left, or a value is not a ``str``, the chunks are counted as before, so the
bound stops a render at the same place with the same error: the sum only decides that
the counting could never have stopped it.

:func:`output_bound` accepts only what it can bound and answers None for anything else:
a statement other than output, ``if`` and a ``for`` over a list or tuple of string
literals (no assignment, macro, call block, include, import, extends or block), and a
printed expression other than text, a string literal, a variable, a loop's variable or
count, and a filter whose output is at most a known factor of its string input
(``capitalize``, ``upper``, ``lower``: :data:`CASE_GROWTH`). An ``if``'s test is not
printed, so it may be anything; its branches count by the larger of each part (the text of
every branch: see below).

The text's length is not written into the template's code as a number: the code of two
templates that differ only in their text is the same code with other string constants
(review's shape cache, :mod:`promptops.review.skeleton`, and validation's parse shapes
share it so), so the bound names each text, and the code computes its length from the
constant once, when the template's module runs.
"""

from __future__ import annotations

from collections.abc import Callable

from jinja2 import nodes

# The most characters Unicode's full case mappings give one character (U+0390 upper:
# three; U+0130 lower: two): str.upper, lower and capitalize of a str are at most this
# many times its length (tests/sandbox/test_output_bound.py checks every code point).
CASE_GROWTH = 3

# (fixed, ((text, times), ...), ((name, times), ...)): the output is at most fixed, plus
# each text's length times its times, plus each named str's length times its times
Bound = tuple[int, tuple[tuple[str, int], ...], tuple[tuple[str, int], ...]]
_Form = tuple[int, list[tuple[str, int]], dict[str, int]]


class _Unbounded(Exception):
    """The template holds something :func:`output_bound` cannot bound."""


def output_bound(template: nodes.Template, growth: Callable[[str], int | None]) -> Bound | None:
    """``(fixed, texts, names)``: the template's output is at most ``fixed``, plus each
    ``(text, times)`` of ``texts`` times the text's length, plus each ``(name, times)`` of
    ``names`` times the length of the name's value, when every such value is a ``str``;
    None when no such bound is proved. ``growth``: the factor of a filter's output over
    its ``str`` input, None for a filter that has none."""
    try:
        fixed, texts, names = _Walk(growth).body(template.body, {}, ())
    except _Unbounded:
        return None
    return fixed, tuple(texts), tuple(sorted(names.items()))


_NOTHING: _Form = (0, [], {})
# Names Jinja's code binds itself, not read from the context: `self` (the template's
# reference), `loop` (outside a literal loop here), and a macro's or call block's own
_SPECIAL = frozenset({"self", "loop", "caller", "varargs", "kwargs"})


def _plus(a: _Form, b: _Form, by: int = 1) -> _Form:
    names = dict(a[2])
    for name, n in b[2].items():
        names[name] = names.get(name, 0) + n * by
    return a[0] + b[0] * by, a[1] + [(t, n * by) for t, n in b[1]], names


def _larger(a: _Form, b: _Form) -> _Form:
    """At least either of the two, for every length of the names (all >= 0): the larger
    fixed part and name counts, and the texts of both (their lengths are not known here)."""
    names = dict(a[2])
    for name, n in b[2].items():
        names[name] = max(names.get(name, 0), n)
    return max(a[0], b[0]), a[1] + b[1], names


def _literals(node: nodes.Node) -> list[str] | None:
    """The items of a list or tuple of string literals written in the template."""
    if isinstance(node, nodes.List | nodes.Tuple) and all(
            isinstance(i, nodes.Const) and type(i.value) is str for i in node.items):
        return [i.value for i in node.items]  # type: ignore[attr-defined]
    if isinstance(node, nodes.Const) and type(node.value) in (list, tuple) \
            and all(type(i) is str for i in node.value):
        return list(node.value)
    return None


class _Walk:
    def __init__(self, growth: Callable[[str], int | None]) -> None:
        self.growth = growth

    def body(self, stmts: list[nodes.Node], items: dict[str, int],
             loops: tuple[int, ...]) -> _Form:
        """``items``: each loop variable in scope and its longest item; ``loops``: the item
        counts of the loops around, the innermost last (what ``loop`` counts)."""
        form = _NOTHING
        for stmt in stmts:
            if isinstance(stmt, nodes.Output):
                for child in stmt.nodes:
                    form = _plus(form, self.printed(child, items, loops))
            elif isinstance(stmt, nodes.If):
                branch = self.body(stmt.body, items, loops)
                for other in stmt.elif_:
                    branch = _larger(branch, self.body([other], items, loops))
                form = _plus(form, _larger(branch, self.body(stmt.else_, items, loops)))
            elif isinstance(stmt, nodes.For):
                form = _plus(form, self.loop(stmt, items, loops))
            else:
                raise _Unbounded
        return form

    def loop(self, stmt: nodes.For, items: dict[str, int], loops: tuple[int, ...]) -> _Form:
        values = _literals(stmt.iter)
        target = stmt.target
        if values is None or stmt.test is not None or stmt.recursive \
                or not isinstance(target, nodes.Name):
            raise _Unbounded
        inner = {**items, target.name: max(map(len, values), default=0)}
        each = self.body(stmt.body, inner, (*loops, len(values)))
        return _plus(self.body(stmt.else_, items, loops), each, len(values))

    def printed(self, node: nodes.Node, items: dict[str, int], loops: tuple[int, ...]
                ) -> _Form:
        """The bound of what printing ``node`` gives."""
        if isinstance(node, nodes.TemplateData):
            return 0, [(node.data, 1)], {}
        if isinstance(node, nodes.Getattr) and isinstance(node.node, nodes.Name) \
                and node.node.name == "loop" and node.node.ctx == "load" and loops \
                and "loop" not in items and node.attr in (
                    "index", "index0", "revindex", "revindex0", "length", "depth", "depth0"):
            return len(str(loops[-1])), [], {}  # an int from 0 to the loop's item count
        return self.text(node, items)

    def text(self, node: nodes.Node, items: dict[str, int]) -> _Form:
        """The bound of a ``str`` value: a literal, a variable (a ``str`` when the render
        checks it), a loop's item, a filter of a ``str`` with a known growth."""
        if isinstance(node, nodes.Const) and type(node.value) is str:
            return len(node.value), [], {}
        if isinstance(node, nodes.Name) and node.ctx == "load":
            if node.name in items:
                return items[node.name], [], {}
            if node.name in _SPECIAL:  # not the context's value of that name
                raise _Unbounded
            return 0, [], {node.name: 1}
        if isinstance(node, nodes.Filter) and node.node is not None and not node.args \
                and not node.kwargs and node.dyn_args is None and node.dyn_kwargs is None:
            factor = self.growth(node.name)
            if factor is not None:
                return _plus(_NOTHING, self.text(node.node, items), factor)
        raise _Unbounded
