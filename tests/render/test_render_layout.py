"""The render package keeps its room: no module reaches into another's private names.

``render/loops.py`` used to call the renderer's ``_one`` and ``_history`` (and import it
back: a circle). The layering itself is an import-linter contract in ``pyproject.toml``
(``tests/test_architecture.py`` runs it); this test holds the other half: in ``render/``
a private name (``_x``) is only read off ``self``/``cls`` or the module that defines it,
and no module anywhere in ``promptops`` imports a private name from ``promptops.render``.
"""

from __future__ import annotations

import ast
from pathlib import Path

from helpers.repo import REPO_ROOT

PACKAGE = REPO_ROOT / "promptops"


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _reaches(path: Path) -> list[str]:
    """Where ``path`` reads a private attribute off anything but ``self`` or ``cls``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr) and not (
                isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
            found.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
    return found


def _imports_private(path: Path) -> list[str]:
    """Where ``path`` imports a private name from ``promptops.render``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [f"{path.name}:{node.lineno}: {alias.name} from {node.module}"
            for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
            and (node.module or "").startswith("promptops.render")
            for alias in node.names if _private(alias.name)]


def test_no_render_module_reads_another_objects_private_names() -> None:
    found = [hit for path in sorted((PACKAGE / "render").glob("*.py")) for hit in _reaches(path)]
    assert found == []


def test_nothing_imports_a_private_name_from_render() -> None:
    found = [hit for path in sorted(PACKAGE.rglob("*.py")) for hit in _imports_private(path)]
    assert found == []


def test_the_check_can_fail(tmp_path: Path) -> None:
    """What loops.py did is found."""
    bad = tmp_path / "loops.py"
    bad.write_text("def walk(renderer):\n    renderer._one(1)\n", encoding="utf-8")
    assert _reaches(bad) == ["loops.py:2: renderer._one"]
    bad.write_text("from promptops.render.renderer import MAX_HISTORY, _Plan\n",
                   encoding="utf-8")
    assert _imports_private(bad) == ["loops.py:1: _Plan from promptops.render.renderer"]
