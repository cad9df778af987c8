"""The tests' own Jinja template files, as texts: material for checks that compare a fast
path with Jinja's own answer on real templates (the review's shape cache, validation's
parse shapes). Never the held-out corpus, which is only measured."""

from __future__ import annotations

from pathlib import Path

from jinja2 import nodes

TESTS = Path(__file__).resolve().parent.parent


def template_files() -> list[str]:
    """Every ``*.j2`` under tests/ outside a held-out part, in path order, as text."""
    out = []
    for path in sorted(TESTS.rglob("*.j2")):
        if "heldout" in path.parts:
            continue
        try:
            out.append(path.read_text(encoding="utf-8"))
        except UnicodeDecodeError:
            continue
    return out


def dump_tree(node: object) -> object:
    """A Jinja tree as plain data: every node's type, line and fields (``Node.__eq__``
    skips lines), independent of the code under test."""
    if isinstance(node, nodes.Node):
        return (type(node).__name__, node.lineno,
                tuple((f, dump_tree(getattr(node, f, None))) for f in node.fields))
    if isinstance(node, list | tuple):
        return (type(node).__name__, tuple(dump_tree(x) for x in node))
    return (type(node).__name__, node)
