"""A template reaches for a Python internal (``__class__``, ``__globals__``, ``mro``...).

Why: walking from any value to ``__class__.__mro__``, ``__subclasses__()``,
``__globals__`` or ``__builtins__`` is the classic Jinja sandbox escape, and no prompt
needs it. The sandbox refuses every such access when the prompt is rendered, so the
prompt fails on every request; lint names it in review, before it is merged. Found
through attributes (``x.__class__``), subscripts (``x['__class__']``), the ``attr``
filter, bare names (``__builtins__``) and ``str.format`` fields (``'{0.__globals__}'``),
in inline text and in every partial a prompt includes.

Measured on the real-prompt corpus: no finding in 78 prompts.

Fails::

    text: "{{ ''.__class__.__mro__[1].__subclasses__() }}"

Passes::

    text: "{{ topic | title }}"
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from string import Formatter
from typing import TYPE_CHECKING, Any

from jinja2 import nodes

from promptops.lint.problem import Hit
from promptops.lint.rules._jinja import position, template_sources

if TYPE_CHECKING:
    from promptops.lint.context import LintContext


CODE, NAME, LEVEL, NEEDS = "PO510", "unsafe-template-access", "error", "package"

# Internals of functions, frames, generators and coroutines that lead to globals or code.
_INTERNAL = frozenset({
    "mro", "func_globals", "func_code", "func_closure", "func_defaults", "im_func",
    "im_self", "f_globals", "f_locals", "f_builtins", "f_back", "f_code", "tb_frame",
    "tb_next", "co_code", "gi_frame", "gi_code", "gi_yieldfrom", "cr_frame", "cr_code",
    "cr_await", "ag_frame", "ag_code",
})
_FIRST = re.compile(r"[^.\[]*")
_STEP = re.compile(r"\.([^.\[]+)|\[([^\]]+)\]")


def unsafe(name: object) -> bool:
    return isinstance(name, str) and (name.startswith("__") or name in _INTERNAL)


def _format_fields(fmt: str, depth: int = 0) -> Iterator[tuple[bool, str]]:
    """(is an attribute, name) of each step a ``str.format`` field walks (``{0.a[b]}``),
    nested width fields (``{0:{1.a}}``) included."""
    try:
        parsed = list(Formatter().parse(fmt))
    except ValueError:  # a malformed format string fails on its own
        return
    for _, field, spec, _ in parsed:
        head = _FIRST.match(field or "")
        for m in _STEP.finditer(field or "", head.end() if head else 0):
            yield (m.group(1) is not None, m.group(1) or m.group(2))
        if spec and "{" in spec and depth < 2:
            yield from _format_fields(spec, depth + 1)


# The node classes :func:`_findings` looks at (each of its branches starts by testing one):
# a template of 10 KB has thousands of nodes and a generator call for each that yields
# nothing cost more than the rest of the rule on long, branchy templates where no text
# repeats (issue 26, session 9).
_LOOKED_AT = (nodes.Getattr, nodes.Getitem, nodes.Filter, nodes.Name, nodes.Call)


def _findings(node: nodes.Node) -> Iterator[tuple[str, str, str, int]]:
    """(how it is reached, name, needle to locate, columns to skip) of each access."""
    if isinstance(node, nodes.Getattr) and unsafe(node.attr):
        yield "attribute", node.attr, f".{node.attr}", 1
    elif isinstance(node, nodes.Getitem) and isinstance(node.arg, nodes.Const):
        if unsafe(node.arg.value):
            yield "subscript", node.arg.value, node.arg.value, 0
    elif isinstance(node, nodes.Filter) and node.name == "attr" and node.args:
        arg = node.args[0]
        if isinstance(arg, nodes.Const) and unsafe(arg.value):
            yield "`attr` filter on", arg.value, arg.value, 0
    elif isinstance(node, nodes.Name) and node.ctx == "load" and unsafe(node.name):
        yield "name", node.name, node.name, 0
    elif isinstance(node, nodes.Call) and isinstance(node.node, nodes.Getattr):
        owner = node.node.node
        if node.node.attr in ("format", "format_map") and isinstance(owner, nodes.Const) \
                and isinstance(owner.value, str):
            for is_attr, key in _format_fields(owner.value):
                if unsafe(key):
                    yield "format field", key, f".{key}" if is_attr else key, int(is_attr)


def _accesses(ctx: LintContext, source: str) -> list[tuple[int, str, str, str, int]]:
    """(line, how, name, needle, skip) of each unsafe access in ``source``: a function of
    the text alone, kept once per distinct text (a forked lint child computes half of them,
    :mod:`promptops.lint.halves`) and computed once per template shape (what it reads of a
    tree is in its tags: :mod:`promptops.lint.shaped`); empty when it does not parse."""
    return ctx.shaped(CODE, source, lambda ast: _accessed(ctx, ast), _read, _kind)


def _read(every: list[nodes.Node]) -> Iterator[nodes.Node]:
    """The literals :func:`_findings` reads: a subscript's, the ``attr`` filter's first
    argument, the string ``format`` is called on."""
    for node in every:
        if isinstance(node, nodes.Getitem):
            yield node.arg
        elif isinstance(node, nodes.Filter) and node.name == "attr" and node.args:
            yield node.args[0]
        elif isinstance(node, nodes.Call) and isinstance(node.node, nodes.Getattr):
            yield node.node.node


def _kind(value: object) -> object:
    """What :func:`_findings` makes of a literal it reads: a name that is no internal and
    a string without a format field (no brace) give nothing, whatever they are."""
    if isinstance(value, str) and (unsafe(value) or "{" in value or "}" in value):
        return value
    return None


def _accessed(ctx: LintContext, ast: nodes.Template | None) -> list[tuple[int, str, str, str, int]]:
    if ast is None:
        return []
    return [(node.lineno, *found) for node in ctx.nodes(ast)
            if isinstance(node, _LOOKED_AT) for found in _findings(node)]


def check(ctx: LintContext) -> Iterator[Hit]:
    seen: set[tuple[str, Any, int, str]] = set()
    for path, loc, source in template_sources(ctx):
        for lineno, how, name, needle, skip in ctx.memo(CODE, source,
                                                         lambda s: _accesses(ctx, s)):
            if (path, loc, lineno, name) in seen:
                continue
            seen.add((path, loc, lineno, name))
            line, col = position(ctx, path, loc, lineno, needle, skip)
            yield Hit(path, line, col,
                      f"{how} {name!r} reaches a Python internal the sandbox refuses "
                      "(a sandbox escape attempt; the prompt fails on every request)")
