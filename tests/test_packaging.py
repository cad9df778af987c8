"""What we publish: the distribution name, the wheel's files, and every install line.

``promptops`` on PyPI is someone else's program, so nothing we ship or scaffold may
install the bare name; the distribution is ``promptops-mcp``. The starter must reach the
wheel as real files (no symlink anywhere), links must come from ``[project.urls]``, and
every pin must name the version being built.
"""

from __future__ import annotations

import json
import re
import subprocess
import tomllib
import zipfile
from pathlib import Path
from typing import Any

import pytest
from helpers.repo import PYTHON, REPO_ROOT, checkout_files, copy_checkout

from promptops import __version__, about, scaffold

PYPROJECT = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
BARE = re.compile(r"pip3? install\b[^\n&;|#]*?(?<![\w./-])promptops(?![\w-])")
ACTION_REF = re.compile(r"(?:uses|repo):\s+(?:https://github\.com/)?([\w.-]+/[\w.-]*promptops"
                        r"[\w.-]*)(?:@v?([\w.]+))?")


def test_the_distribution_name_is_ours_and_the_command_is_promptops() -> None:
    project = PYPROJECT["project"]
    assert project["name"] == about.DISTRIBUTION == "promptops-mcp"
    assert project["scripts"] == {"promptops": "promptops.__main__:main"}
    assert project["dynamic"] == ["version"]  # one home: promptops.__version__
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {
        "attr": "promptops.__version__"}
    # not on PyPI: what a user is told to install is the repository at the release tag
    assert about.install_spec() == (
        f"promptops-mcp @ git+https://github.com/{about.github_repository()}@v{__version__}")


def test_no_symlink_in_the_repository() -> None:
    staged = subprocess.run(["git", "ls-files", "-s"], cwd=REPO_ROOT, capture_output=True,
                            text=True, check=True).stdout
    assert [ln for ln in staged.splitlines() if ln.startswith("120000")] == []
    assert [rel for rel in checkout_files() if (REPO_ROOT / rel).is_symlink()] == []


def _importable(folder: Path) -> list[str]:
    return [p.relative_to(folder).as_posix().replace("/", ".") for p in sorted(folder.rglob("*"))
            if p.is_dir() and p.name.isidentifier() and "__pycache__" not in p.parts
            and all(part.isidentifier() for part in p.relative_to(folder).parts)]


def test_the_suite_reads_nothing_beside_the_checkout() -> None:
    """No test reaches for the shared folder beside the checkout: a clone runs alone."""
    beside = re.compile(r"\.\./shared|/work" r"/shared|parents?\[\d\]\s*/\s*[\"']shared[\"']")
    found = [rel for rel in checkout_files() if rel.startswith("tests/") and rel.endswith(".py")
             and beside.search((REPO_ROOT / rel).read_text(encoding="utf-8"))]
    assert found == []
    assert beside.search("Path(__file__).parents[2] / " + '"shared"')  # the check can fail


def test_the_package_list_covers_the_tree() -> None:
    """A package or starter folder missing from pyproject's list would be left out."""
    listed = PYPROJECT["tool"]["setuptools"]["packages"]
    code = ["promptops"] + [f"promptops.{p}" for p in _importable(REPO_ROOT / "promptops")
                            if (REPO_ROOT / "promptops" / p.replace(".", "/") / "__init__.py")
                            .is_file()]
    starter = ["promptops._starter"] + [f"promptops._starter.{p}"
                                        for p in _importable(REPO_ROOT / "templates")]
    assert sorted(listed) == sorted(code + starter), "update [tool.setuptools] packages"
    assert PYPROJECT["tool"]["setuptools"]["package-dir"] == {"promptops._starter": "templates"}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel built from a copy of the checkout (setuptools writes build/ where it runs)."""
    source = copy_checkout(tmp_path_factory.mktemp("src"))
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run([PYTHON, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out),
                           str(source)], capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stderr
    (built,) = out.glob("*.whl")
    return built


def test_the_wheel_carries_the_code_and_the_starter_as_real_files(wheel: Path) -> None:
    assert wheel.name == f"promptops_mcp-{__version__}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as zf:
        infos = zf.infolist()
        names = {i.filename for i in infos}
        meta = zf.read(f"promptops_mcp-{__version__}.dist-info/METADATA").decode()
        entry = zf.read(f"promptops_mcp-{__version__}.dist-info/entry_points.txt").decode()
    for info in infos:  # no symlink: the mode bits zip keeps for unix files
        assert (info.external_attr >> 16) & 0o170000 != 0o120000, info.filename
    modules = {p.relative_to(REPO_ROOT).as_posix() for p in (REPO_ROOT / "promptops").rglob("*.py")}
    assert modules <= names
    assert "promptops/py.typed" in names
    starter = {f"promptops/_starter/{p.relative_to(REPO_ROOT / 'templates').as_posix()}"
               for p in (REPO_ROOT / "templates").rglob("*") if p.is_file()}
    assert {n for n in names if n.startswith("promptops/_starter/")} == starter
    assert "promptops/_starter/.github/workflows/promptops.yml" in starter
    assert "promptops/_starter/.gitignore" in starter
    assert not [n for n in names if n.startswith(("tests/", "templates/", "benchmarks/"))]
    assert "Name: promptops-mcp\n" in meta and f"Version: {__version__}\n" in meta
    urls = dict(ln.removeprefix("Project-URL: ").split(", ", 1)
                for ln in meta.splitlines() if ln.startswith("Project-URL: "))
    assert urls == PYPROJECT["project"]["urls"]
    assert "promptops = promptops.__main__:main" in entry


def installs_bare_name(text: str) -> list[str]:
    """The lines of ``text`` that pip-install PyPI's unrelated ``promptops``."""
    return [m.group(0) for m in BARE.finditer(text)]


def test_the_bare_name_check_can_fail() -> None:
    for line in ("python -m pip install promptops", 'pip install "promptops==0.1.0"',
                 "pip install -U promptops>=0.1", "pip3 install 'promptops'"):
        assert installs_bare_name(line), line
    for line in ("pip install promptops-mcp", 'pip install "promptops-mcp==0.1.0"',
                 'pip install "$GITHUB_ACTION_PATH"', "pip install -e '.[test]'",
                 "pip install ./promptops", "pip install . && promptops init demo"):
        assert installs_bare_name(line) == [], line


def _shipped() -> dict[str, str]:
    """Every text file we ship or publish (tests and the prompt corpus aside)."""
    out = {}
    for rel in checkout_files():
        if rel.startswith("tests/") or Path(rel).suffix in (".png", ".wav", ".json"):
            continue
        out[rel] = (REPO_ROOT / rel).read_text(encoding="utf-8")
    return out


def _scaffolded() -> dict[str, str]:
    """What init writes or prints, for a root and a subfolder package."""
    out: dict[str, str] = {}
    for package in (".", "packages/prompts"):
        out[f"workflow {package}"] = scaffold.workflow_text(package)
        out[f"pre-commit {package}"] = scaffold.precommit_text(package)
        out[f"snippet {package}"] = scaffold.snippet(package)
    for rel, data in scaffold.package_files(Path("demo")).items():
        if not rel.endswith((".png", ".wav")):
            out[rel] = data.decode("utf-8")
    return out


def test_nothing_we_ship_or_scaffold_installs_the_bare_name() -> None:
    found = {name: hits for name, text in {**_shipped(), **_scaffolded()}.items()
             if (hits := installs_bare_name(text))}
    assert found == {}
    reusable = (REPO_ROOT / ".github/workflows/promptops-review.yml").read_text("utf-8")
    # what it pip-installs: the repository at the release tag (nothing is on PyPI)
    assert f"default: {about.install_spec()}\n" in reusable


def test_every_pin_and_reference_names_this_version_and_our_repository() -> None:
    """Pins live in text users copy; this keeps them in step with __version__ and urls."""
    repository = about.github_repository()
    assert repository == "promptops-mcp/promptops-mcp"
    texts = {**_shipped(), **_scaffolded()}
    refs = {(name, m.group(1), m.group(2)) for name, text in texts.items()
            for m in ACTION_REF.finditer(text)}
    assert refs, "the docs and the scaffold show how to use the Action and the hooks"
    assert {r[1] for r in refs} == {repository}
    assert {r[2] for r in refs if r[2] is not None} == {__version__}
    # no registry pin a user could copy (promptops-mcp is not on PyPI): the repository at
    # this version's tag instead
    assert [name for name, text in texts.items() if re.search(r"promptops-mcp==\d", text)] == []
    pins = {m for text in texts.values()
            for m in re.findall(r"promptops-mcp @ git\+https://github\.com/([\w./-]+@v[\w.]+)",
                                text)}
    assert pins == {f"{repository}@v{__version__}"}
    assert not [name for name, text in texts.items() if "<owner>" in text]


def test_links_in_sarif_come_from_project_urls(tmp_path: Path) -> None:
    from promptops.lint.output import sarif

    urls = PYPROJECT["project"]["urls"]
    assert about.project_urls() == urls
    doc = json.loads(sarif.render([], _report(tmp_path)))
    driver = doc["runs"][0]["tool"]["driver"]
    assert driver["informationUri"] == urls["Homepage"]
    assert {r["helpUri"].split("#")[0] for r in driver["rules"]} == {
        f"{urls['Documentation']}/rules.md"}
    headings = set(re.findall(r"(?m)^### (PO\d+) ([\w-]+)$",
                              (REPO_ROOT / "docs/rules.md").read_text(encoding="utf-8")))
    anchors = {r["helpUri"].split("#")[1] for r in driver["rules"]}
    assert anchors == {f"{code.lower()}-{name}" for code, name in headings}
    # The only github.com repository named like us, anywhere we ship, is the one in urls.
    ours = {m for text in _shipped().values()
            for m in re.findall(r"github\.com/([\w.-]+/[\w.-]*promptops[\w.-]*)", text)}
    assert ours == {about.github_repository()}


def _report(root: Path) -> Any:
    from promptops.lint.output import Report

    return Report(package=str(root), prefix=".", display=".", texts={})


def test_links_are_read_from_the_installed_metadata_outside_a_checkout(wheel: Path,
                                                                        tmp_path: Path) -> None:
    """Installed from the wheel (no pyproject.toml beside it) the links still resolve."""
    target = tmp_path / "site"
    done = subprocess.run([PYTHON, "-m", "pip", "install", "--no-deps", "-q", "--target",
                           str(target), str(wheel)], capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import promptops.about as a, "
            "promptops.scaffold as s, json; assert a.__file__.startswith(sys.argv[1]); "
            "print(json.dumps([a.project_urls(), str(s.starter_dir())]))")
    out = subprocess.run([PYTHON, "-c", code, str(target)], capture_output=True, text=True,
                         check=True, cwd=tmp_path).stdout
    urls, starter = json.loads(out)
    assert urls == PYPROJECT["project"]["urls"]
    assert Path(starter) == target / "promptops" / "_starter"
