"""No function in promptops/lint over cyclomatic complexity 25 (issue 25).

Lint was, after interop, the package with the most branchy functions; incremental lint's
three strategies were 27-32, their exactness argued in prose beside code too tangled to
check it against. The count is radon's (McCabe's, as radon counts it): one, plus one per
``if``/``elif``, loop, ``except``, conditional expression and ``case``, one per ``for``
and ``if`` of a comprehension, and one per extra operand of ``and``/``or``. A nested
function counts on its own, not in the one around it. Measured here with ``ast`` (radon is
not a dependency); the synthetic cases below check the counter itself.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import promptops

LIMIT = 25
LINT = Path(promptops.__file__).parent / "lint"

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


def test_no_function_in_lint_is_over_the_limit() -> None:
    over = [f"{path.relative_to(LINT.parent)}:{line} {name} ({cc})"
            for path in sorted(LINT.rglob("*.py"))
            for name, line, cc in functions(path.read_text(encoding="utf-8"))
            if cc > LIMIT]
    assert not over, f"over complexity {LIMIT}: {over}"


def test_the_counter_counts_as_radon_does() -> None:
    source = '''
def f(a, b, items):
    if a and b or not a:          # if: 1, and/or: 2
        pass
    elif b:                       # 1
        pass
    for x in items:               # 1
        while x:                  # 1
            x = 0 if a else 1     # 1
    try:
        pass
    except ValueError:            # 1
        pass
    ys = [y for y in items if y]  # 2
    def inner(z):                 # its own
        return z if z else 0
    match a:
        case 1:                   # 1
            pass
        case _:                   # 1
            pass
    return ys
'''
    assert {name: cc for name, _, cc in functions(source)} == {"f": 13, "inner": 2}


def test_a_function_over_the_limit_is_caught() -> None:
    body = "".join(f"    if a == {i}:\n        return {i}\n" for i in range(LIMIT))
    [(_, _, cc)] = functions(f"def branchy(a):\n{body}    return -1\n")
    assert cc == LIMIT + 1 > LIMIT
