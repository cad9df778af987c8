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


def _includes(*names: str) -> str:
    return "".join(f'{{% include "partials/{n}.j2" %}}' for n in names)


def _prompt(name: str, text: str) -> str:
    return (f"name: {name}\ndescription: d\narguments:\n- name: topic\n  required: true\n"
            f"messages:\n- role: user\n  text: '{text}{{{{ topic }}}}'\n")


# An edit that keeps every prompt's name and the set of files it reads can still change the
# include graph's shape, which include depth (PO303) and cycles (PO302) are judged on.
RESHAPES = {
    "a chain five deep made flat (PO303 goes)": (
        {f"p{i}": _includes(f"p{i + 1}") for i in range(1, 5)} | {"p5": "end"},
        _includes("p1", "p2"), "p1", "flat"),
    "a flat partial made to include the rest, five deep (PO303 comes)": (
        {"p1": "flat"} | {f"p{i}": _includes(f"p{i + 1}") for i in range(2, 5)} | {"p5": "end"},
        _includes("p1", "p2"), "p1", _includes("p2")),
    "two partials made to include each other (PO302 comes)": (
        {"p1": _includes("p2"), "p2": "end"}, _includes("p1", "p2"), "p2", _includes("p1")),
}


@pytest.mark.parametrize("case", list(RESHAPES), ids=list(RESHAPES))
def test_an_edit_that_reshapes_the_includes_relints_as_a_full_run_would(
        tmp_path: Path, case: str) -> None:
    partials, text, edited, after = RESHAPES[case]
    files = {"promptops.yaml": "name: shapes\nversion: 1.0.0\ndescription: d\n",
             "prompts/deep.prompt.yaml": _prompt("deep", text),
             **{f"prompts/{n}.prompt.yaml": _prompt(n, "") for n in ("one", "two", "three")},
             **{f"partials/{n}.j2": body + "\n" for n, body in partials.items()}}
    root = tmp_path / "shapes"
    make_repo(root, files)
    assert _lint(root)[1] == "full"
    (root / "partials" / f"{edited}.j2").write_text(after + "\n", encoding="utf-8")
    found, _ = _lint(root)
    assert found == _lint(root, cache=False)[0]
