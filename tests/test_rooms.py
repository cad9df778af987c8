"""Ratchets on the inside of the rooms (issue 25): file size, branching and ``Any``.

The layer contracts (tests/test_architecture.py) keep the import graph honest; these keep
the modules themselves livable, with the anchors' own figures as the bar (rooms-review.md:
pre-commit, starlette, uvicorn and the MCP SDK keep functions under cyclomatic complexity
20 in 98% or more of cases and few files over 500 lines).

- No module over 500 lines: a module that grows past it holds two concepts.
- No function (method or closure) over cyclomatic complexity 25, as radon counts it
  (tests/helpers/complexity.py), except
  the Handlebars reader and translator, whose hotspots follow handlebars.js function for
  function; each of those carries a ``# complexity:`` comment saying why.
- ``Any`` (the name, in code: not comments or strings) at most :data:`ANY_BUDGET` times; the
  bound only goes down.
"""

from __future__ import annotations

import tokenize
from pathlib import Path

import pytest
from helpers.complexity import functions

PACKAGE = Path(__file__).resolve().parents[1] / "promptops"
MAX_LINES = 500
MAX_COMPLEXITY = 25
# The parsers: Handlebars' grammar and whitespace rules restated from handlebars.js, and
# the sandbox's recognizer over Jinja's token stream (on the parse path of every build).
PARSERS = {"interop/handlebars.py", "interop/hbs_to_jinja.py", "interop/hbs_layout.py",
           "sandbox/nesting.py"}
ANY_BUDGET = 168  # 368 at 9eb8bed (the review); issue 25 asks for 180 or fewer


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def complexity_over(source: str, bound: int) -> list[tuple[str, int, int]]:
    """(name, line, complexity) of every function in ``source`` over ``bound``."""
    return sorted(((n, line, cc) for n, line, cc in functions(source) if cc > bound),
                  key=lambda item: item[1])


def any_count(path: Path) -> int:
    with path.open("rb") as f:
        return sum(1 for t in tokenize.tokenize(f.readline)
                   if t.type == tokenize.NAME and t.string == "Any")


def test_no_module_is_over_500_lines() -> None:
    long = [f"{p.relative_to(PACKAGE)}: {n}" for p in _modules()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES]
    assert not long, long


def test_no_function_is_over_complexity_25_outside_the_parsers() -> None:
    found = []
    for path in _modules():
        rel = path.relative_to(PACKAGE).as_posix()
        source = path.read_text(encoding="utf-8")
        for name, line, cc in complexity_over(source, MAX_COMPLEXITY):
            if rel in PARSERS:
                lines = source.splitlines()
                said = any("# complexity:" in ln for ln in lines[max(0, line - 4):line + 3])
                if said:
                    continue
            found.append(f"{rel}:{line} {name} ({cc})")
    assert not found, "\n".join(found)


def test_any_stays_within_budget() -> None:
    total = sum(any_count(p) for p in _modules())
    assert total <= ANY_BUDGET, f"Any appears {total} times; the budget is {ANY_BUDGET}"
    assert ANY_BUDGET <= 180, "issue 25: Any down by half (368 -> 180 or fewer)"


@pytest.mark.parametrize(("source", "over"), [
    ("def f(x):\n    return x\n", []),
    ("def f(x):\n" + "".join(f"    if x == {i}:\n        return {i}\n" for i in range(30))
     + "    return 0\n", [("f", 1, 31)]),
    ("class C:\n    def m(self, x):\n        def inner(y):\n"
     + "".join(f"            if y == {i}:\n                return {i}\n" for i in range(26))
     + "            return 0\n        return inner\n", [("inner", 3, 27)]),
])
def test_the_complexity_check_sees_methods_and_closures(source: str, over: list[object]) -> None:
    assert complexity_over(source, MAX_COMPLEXITY) == over


def test_the_any_count_reads_code_not_comments(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text("from typing import Any  # Any\nx: Any = 'Any'\n", encoding="utf-8")
    assert any_count(path) == 2


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
