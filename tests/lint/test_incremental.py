"""An edited prompt re-lints that prompt only, and the findings equal a full run's.

Each case edits the real-prompt corpus package in a git repository (where lint keeps its
cache), lints it (the cached record of the previous run is the starting point), and
compares with a run that uses no cache at all.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers.repo import make_repo

from promptops.lint.runner import Options, lint_package
from promptops.pipeline.build import Build

CORPUS = Path(__file__).parent / "corpus" / "package"


def _lint(pkg: Path, *, cache: bool = True) -> tuple[list[str], str]:
    linted = lint_package(Build(pkg, None, keep_asts=True), Options(use_cache=cache))
    return [f"{f.path}:{f.line}:{f.col}:{f.code}:{f.message}" for f in linted.findings], \
        linted.how


@pytest.fixture
def pkg(tmp_path: Path) -> Path:
    root = Path(shutil.copytree(CORPUS, tmp_path / "corpus"))
    make_repo(root, {})
    assert _lint(root)[1] == "full"
    assert _lint(root)[1] == "cached"
    return root


EDITS = {
    "a template only one prompt reads gains trailing whitespace":
        ("templates/haiku.0.md.j2", lambda t: t.replace("\n", "   \n", 1), "incremental"),
    "a prompt gains its description":
        ("prompts/menu-item.prompt.yaml",
         lambda t: t.replace("name: menu-item\n", "name: menu-item\ndescription: Menus\n"),
         "incremental"),
    "a prompt's argument becomes a surface":
        ("prompts/haiku.prompt.yaml", lambda t: t.replace("name: topic", "name: context")
         .replace("role: user", "role: assistant"), "incremental"),
    "a prompt includes another template: structure changed, full run":
        ("templates/haiku.0.md.j2",
         lambda t: t + '\n{% include "templates/recipe.0.md.j2" %}\n', "full"),
    "a prompt is renamed: full run":
        ("prompts/haiku.prompt.yaml", lambda t: t.replace("name: haiku", "name: haiku2"),
         "full"),
}


@pytest.mark.parametrize("edit", list(EDITS), ids=list(EDITS))
def test_an_edit_relints_as_a_full_run_would(pkg: Path, edit: str) -> None:
    path, change, how = EDITS[edit]
    target = pkg / path
    before = target.read_text(encoding="utf-8")
    after = change(before)
    assert after != before
    target.write_text(after, encoding="utf-8")
    found, used = _lint(pkg)
    assert used == how
    assert found == _lint(pkg, cache=False)[0]
