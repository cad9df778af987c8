"""No import circle anywhere in promptops/: a module never imports what imports it.

A circle means two modules that cannot be read, tested or moved apart (the lint registry,
its rules and their context were one of 48 modules), and which of them runs first decides
what half-initialised names the other sees. The import-linter contracts keep the layers;
this keeps the rooms inside them.

What counts: every import grimp (import-linter's graph) finds, at module level and inside
functions, because a function-level import runs too; a lazy import breaks a circle at
start-up but not in the code's shape. Imports under ``if TYPE_CHECKING:`` do not count:
they never run (the same choice as ``exclude_type_checking_imports`` in pyproject.toml).
Each circle is reported as its strongly connected component (every module on it).

``KNOWN`` holds the circles that remain, each with who removes it; a circle not in it
fails, and so does a listed one that is gone (so the list only shrinks).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import grimp
import pytest

# Circles being removed elsewhere; each entry is one component. None is left.
KNOWN: set[frozenset[str]] = set()


def circles(package: str) -> set[frozenset[str]]:
    """The import circles of ``package``: each strongly connected component of its import
    graph with more than one module, or one module that imports itself."""
    graph = grimp.build_graph(package, cache_dir=None, exclude_type_checking_imports=True)
    edges = {m: sorted(graph.find_modules_directly_imported_by(m) & graph.modules)
             for m in graph.modules}
    # Tarjan's algorithm, iterative (a deep chain must not hit the recursion limit)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: set[frozenset[str]] = set()
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            if i < len(edges[node]):
                work.append((node, i + 1))
                nxt = edges[node][i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1 or node in edges[node]:
                    found.add(frozenset(component))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return found


def test_promptops_has_no_import_circle_but_the_known_ones() -> None:
    found = circles("promptops")
    new = sorted(sorted(c) for c in found - KNOWN)
    assert not new, f"import circles: {new}"
    gone = sorted(sorted(c) for c in KNOWN - found)
    assert not gone, f"gone (take them off KNOWN): {gone}"


def _package(root: Path, modules: dict[str, str]) -> None:
    for name, body in modules.items():
        path = root.joinpath(*name.split(".")).with_suffix(".py")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body, encoding="utf-8")


@pytest.fixture
def synthetic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in [m for m in sys.modules if m == "circ" or m.startswith("circ.")]:
        del sys.modules[name]


def test_the_checker_finds_a_circle_through_a_function_level_import(synthetic: Path) -> None:
    _package(synthetic, {
        "circ.__init__": "",
        "circ.a": "from circ import b\n",
        "circ.b": "def f():\n    from circ import c\n",
        "circ.c": "import circ.a\n",
        "circ.d": "import circ.a\n",  # imports into the circle, not part of it
        "circ.e": "import circ.e\n",  # imports itself
    })
    assert circles("circ") == {frozenset({"circ.a", "circ.b", "circ.c"}), frozenset({"circ.e"})}


def test_the_checker_leaves_type_checking_imports_out(synthetic: Path) -> None:
    _package(synthetic, {
        "circ.__init__": "",
        "circ.a": "from circ import b\n",
        "circ.b": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from circ import a\n",
    })
    assert circles("circ") == set()
