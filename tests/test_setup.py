"""The README's one test command installs what the suite needs (issue 24, item 14):
``tests/setup.py`` runs before pytest, ``.ci/run`` runs that command and nothing else."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from helpers.repo import REPO_ROOT
from test_readme import commands

SETUP = REPO_ROOT / "tests" / "setup.py"


def _setup() -> object:
    sys.path.insert(0, str(SETUP.parent))
    import setup  # tests/setup.py

    return setup


def test_the_readme_test_command_runs_the_setup_before_the_suite() -> None:
    (command,) = [lines[0] for lines in commands() if lines[0].endswith("-m process")]
    steps = command.split(" && ")
    assert steps.index("python tests/setup.py") == steps.index(
        "python -m pip install -e '.[test]'") + 1
    assert steps.index("python tests/setup.py") < steps.index("python -m pytest")


def test_ci_runs_exactly_the_readme_command() -> None:
    (command,) = [lines[0] for lines in commands() if lines[0].endswith("-m process")]
    lines = [ln for ln in (REPO_ROOT / ".ci/run").read_text("utf-8").splitlines()
             if ln.strip() and not ln.startswith("#")]
    assert lines == ["set -euo pipefail", 'cd "$(dirname "$0")/.."', command]


def test_every_npm_package_a_test_pins_is_installed_by_the_setup() -> None:
    setup = _setup()
    npm: dict[str, str] = setup.NPM  # type: ignore[attr-defined]
    pinned: set[tuple[str, str]] = set()
    for path in (REPO_ROOT / "tests").rglob("*.py"):
        text = path.read_text("utf-8")
        if "npm_package" not in text and "NODE_PACKAGES" not in text and path.name != "lsp.py":
            continue
        pinned |= set(re.findall(r'npm_package\("([^"]+)", "([^"]+)"\)', text))
        pinned |= set(re.findall(r'^\w+ = \("([^"]+)", "([^"]+)"\)', text, re.M))
        for block in re.findall(r"NODE_PACKAGES = \{([^}]*)\}", text):
            pinned |= set(re.findall(r'"([^"]+)": "([^"]+)"', block))
        pinned |= {("yaml-language-server", v)
                   for v in re.findall(r'^YAML_LS_VERSION = "([^"]+)"', text, re.M)}
    assert pinned and pinned <= set(npm.items()), pinned - set(npm.items())


def test_without_root_the_setup_names_the_command_in_one_line(
        capsys: pytest.CaptureFixture[str]) -> None:
    setup = _setup()
    assert setup.install_apt(["haproxy", "nginx"], root=False) is False  # type: ignore[attr-defined]
    err = capsys.readouterr().err
    assert err == ("tests/setup.py: missing haproxy, nginx: run `sudo apt-get install -y "
                   "haproxy nginx` (or install them with your package manager), then run the "
                   "test command again\n")


def test_the_setup_runs_without_a_terminal_and_reports_what_is_missing() -> None:
    done = subprocess.run([sys.executable, str(SETUP), "--check"], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode in (0, 1), done.stderr
    assert done.stdout == ""
    assert all(line.startswith("tests/setup.py: missing ") for line in done.stderr.splitlines())
    assert (done.returncode == 0) == (done.stderr == "")


def test_the_readme_prints_measured_suite_times_with_their_load() -> None:
    """Issue 24, item 13: no unmeasured "about a minute"; figures with the load they ran
    under, and the script that measures them."""
    readme = (REPO_ROOT / "README.md").read_text("utf-8")
    assert "about a minute" not in readme
    assert "load average" in readme and "benchmarks/suite_bench.py" in readme
    assert (REPO_ROOT / "benchmarks" / "suite_bench.py").is_file()
