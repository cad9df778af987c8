"""What the rules ask of a template's AST, gathered in one walk of it.

Its own module since session 16 (it was :mod:`promptops.lint.context`'s, which reached the
module room limit): the walk does not depend on a package or a context, only on a tree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from jinja2 import nodes


@dataclass(frozen=True)
class Facts:
    """Everything the rules ask of a template, gathered in one walk of its AST."""

    loads: tuple[tuple[str, int], ...]  # variables read, with their line
    stores: frozenset[str]  # names the template binds itself (set, for, macro params)
    calls: tuple[tuple[str, str, int], ...]  # ("filter" | "test", name, line)
    printed: frozenset[str]  # names that appear inside {{ ... }}
    silent: bool  # prints nothing whatever the arguments (no output, no include)



def children(node: nodes.Node) -> list[nodes.Node]:
    """``list(node.iter_child_nodes())``, in the same order, without its two generators per
    node: walking the ASTs was the largest cost of lint after validation on long, branchy
    templates (issue 26), and most of it was Jinja's generic field iteration. No generator
    of its own either (one per list field was a fifth of the walk where no text repeats)."""
    out: list[nodes.Node] = []
    node_type = nodes.Node
    for field in node.fields:
        try:
            item = getattr(node, field)
        except AttributeError:
            continue
        if isinstance(item, list):
            for n in item:
                if isinstance(n, node_type):
                    out.append(n)
        elif isinstance(item, node_type):
            out.append(item)
    return out


def preorder(ast: nodes.Node) -> list[nodes.Node]:
    """Every node of ``ast`` in source order (``ast`` first), iteratively (deep nesting)."""
    out: list[nodes.Node] = []
    stack = [ast]
    while stack:
        node = stack.pop()
        out.append(node)
        kids = children(node)
        kids.reverse()
        stack.extend(kids)
    return out


def _args_key(node: nodes.Getitem) -> str | None:
    """``"reference-file"`` for ``args["reference-file"]`` (a name that is no identifier)."""
    if isinstance(node.node, nodes.Name) and node.node.name == "args" \
            and isinstance(node.arg, nodes.Const) and isinstance(node.arg.value, str):
        return node.arg.value
    return None


def _bound(node: nodes.Node) -> list[str]:
    """The names an import binds: ``{% import "m.j2" as m %}`` binds ``m``, ``{% from "m.j2"
    import a as b, c %}`` binds ``b`` and ``c`` (PO201 must not call them undeclared)."""
    if isinstance(node, nodes.Import):
        return [node.target]
    if isinstance(node, nodes.FromImport):
        return [n if isinstance(n, str) else n[1] for n in node.names]
    return []


# What :func:`collect` does with a node, by the first class of this chain it is an instance
# of (a branch whose extra condition fails falls through to the next, as an if/elif chain
# does). Decided once per node class (``_kinds``), not by six isinstance tests per node:
# on long templates where no text repeats the walk was half of the rules' time.
_NAME, _ARGS_ITEM, _CALL, _OUTPUT, _PARAMS, _LINK = range(6)
_CHAIN: tuple[tuple[int, type | tuple[type, ...]], ...] = (
    (_NAME, nodes.Name), (_ARGS_ITEM, nodes.Getitem), (_CALL, (nodes.Filter, nodes.Test)),
    (_OUTPUT, nodes.Output), (_PARAMS, (nodes.Macro, nodes.CallBlock)),
    (_LINK, (nodes.Include, nodes.Import, nodes.FromImport, nodes.Extends)))


def _kinds(cls: type) -> tuple[tuple[int, ...], bool]:
    """(the branches of the chain a node of ``cls`` matches, in order; is it an Output?)."""
    found = _KINDS.get(cls)
    if found is None:  # a node class Jinja did not define at import (none today)
        found = (tuple(k for k, c in _CHAIN if issubclass(cls, c)), issubclass(cls, nodes.Output))
    return found


def _node_classes(cls: type = nodes.Node) -> list[type]:
    subclasses: list[type] = cls.__subclasses__()
    return [cls, *(c for sub in subclasses for c in _node_classes(sub))]


# Made once at import for every node class Jinja defines: a table, not a cache written at
# run time (tests/test_no_global_state.py).
_KINDS: dict[type, tuple[tuple[int, ...], bool]] = {
    cls: (tuple(k for k, c in _CHAIN if issubclass(cls, c)), issubclass(cls, nodes.Output))
    for cls in _node_classes()}


def _blank(node: nodes.Node) -> bool:
    """A text of whitespace alone, tested without a stripped copy (a long prompt's text is
    one 200 KB node): ``not data.strip()``, which ``isspace`` is but for ""."""
    return isinstance(node, nodes.TemplateData) and (not node.data or node.data.isspace())


def collect(ast: nodes.Template, every: list[nodes.Node] | None = None) -> Facts:
    """The template's facts, in one walk; ``every`` (when given) receives every node in
    source order as :func:`preorder` gives them, so the context's ``nodes`` need not walk
    the same tree again."""
    loads: list[tuple[str, int]] = []
    stores: set[str] = set()
    calls: list[tuple[str, str, int]] = []
    printed: set[str] = set()
    silent = True
    seen = every if every is not None else []
    # (node, inside an output?, hidden?): a hidden node is walked for ``every`` only (the
    # ``args`` of ``args["name"]``, which the facts read through the subscript)
    stack: list[tuple[nodes.Node, bool, bool]] = [(ast, False, False)]
    while stack:
        node, in_output, hidden = stack.pop()
        seen.append(node)
        kids = children(node)
        kids.reverse()
        if hidden:
            stack.extend([(child, in_output, True) for child in kids])
            continue
        branches, is_output = _kinds(type(node))
        pushed = False
        for branch in branches:  # most nodes match none
            if branch == _NAME:
                name = cast(nodes.Name, node)
                if name.ctx == "load":
                    loads.append((name.name, name.lineno))
                    if in_output:
                        printed.add(name.name)
                else:
                    stores.add(name.name)
            elif branch == _ARGS_ITEM:
                if (key := _args_key(cast(nodes.Getitem, node))) is None:
                    continue
                loads.append((key, node.lineno))  # args["reference-file"] reads that one
                if in_output:
                    printed.add(key)
                loads.append(("args", node.lineno))
                arg = cast(nodes.Getitem, node).arg
                stack.extend([(child, in_output, child is not arg) for child in kids])
                pushed = True
            elif branch == _CALL:
                called = cast(nodes.Filter, node)
                if not called.name:
                    continue
                calls.append(("filter" if isinstance(node, nodes.Filter) else "test",
                              called.name, node.lineno))
            elif branch == _OUTPUT:
                silent = silent and all(map(_blank, cast(nodes.Output, node).nodes))
            elif branch == _PARAMS:
                stores.update(a.name for a in cast(nodes.Macro, node).args)
            else:  # _LINK
                silent = False  # what it includes is the include graph's (TemplateIndex)
                stores.update(_bound(node))
            break
        if not pushed:
            stack.extend([(child, in_output or is_output, False) for child in kids])
    loads.sort(key=lambda x: x[1])
    return Facts(tuple(loads), frozenset(stores), tuple(calls), frozenset(printed), silent)
