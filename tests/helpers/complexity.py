"""Cyclomatic complexity as radon counts it (McCabe's), measured with ``ast``.

One, plus one per ``if``/``elif``, loop, ``except``, conditional expression and ``case``,
one per ``for`` and ``if`` of a comprehension, and one per extra operand of
``and``/``or``. A nested function counts on its own, not in the one around it. Used by
tests/test_rooms.py; radon itself is not a dependency (tests/test_rooms.py checks the
counter on synthetic functions).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

_BRANCH = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.ExceptHandler, ast.IfExp,
           ast.match_case)
_FUNCTION = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def complexity(function: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    count = 1
    todo: list[ast.AST] = list(ast.iter_child_nodes(function))
    while todo:
        node = todo.pop()
        if isinstance(node, _FUNCTION):
            continue  # counted on its own
        if isinstance(node, _BRANCH):
            count += 1
        elif isinstance(node, ast.BoolOp):
            count += len(node.values) - 1
        elif isinstance(node, ast.comprehension):
            count += 1 + len(node.ifs)
        todo.extend(ast.iter_child_nodes(node))
    return count


def functions(source: str) -> Iterator[tuple[str, int, int]]:
    """(name, line, complexity) of every function and method in ``source``."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node.name, node.lineno, complexity(node)
