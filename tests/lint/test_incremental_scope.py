"""A rule that declares package scope is re-linted exactly without a change to incremental.py.

Incremental lint knows the rules only by what they declare (``SCOPE``, ``CYCLE`` on the
registry's ``Rule``). The rule here is defined in this file and in no list of codes: it
reports every prompt whose name folds together with another's (PO106 spares the first of
them), so what it finds on one prompt depends on the others' names, the package structure a
``SCOPE = "package"`` rule may read. On a copy of the real-prompt corpus, each edit, addition
and removal is linted incrementally (``relint``, from the record of the last full run) and in
full, with the registry's rules plus this one, and the two must agree; the cases also say
whether the fast path was taken, so a fast path that is never used proves nothing.

The same rule declared ``"prompt"`` gives a wrong answer on an edit: that is what the
declaration is for, and it shows this test can fail.
"""

from __future__ import annotations

import dataclasses
import shutil
import types
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from promptops.lint.cache import Record
from promptops.lint.config import manifest_data, settings
from promptops.lint.context import LintContext
from promptops.lint.engine import Result, lint_source
from promptops.lint.incremental import relint
from promptops.lint.problem import Finding, Hit
from promptops.lint.registry import RULES, Rule, rule_of
from promptops.pipeline.names import fold
from promptops.pipeline.source import WorktreeSource, blob_id

CORPUS = Path(__file__).parent / "corpus" / "package"


def kin_rule(scope: str) -> Rule:
    """PO990 name-kin, a rule as a module declares one (here a module object)."""
    module = types.ModuleType("po990_name_kin", "Prompts whose names fold together.")

    def check(ctx: LintContext) -> Iterator[Hit]:
        groups: dict[str, list[str]] = {}
        for prompt in ctx.pkg.prompts:
            groups.setdefault(fold(prompt.name), []).append(prompt.path)
        for paths in groups.values():
            for path in paths if len(paths) > 1 else ():
                yield Hit(path, 1, 1, f"its name folds together with {len(paths) - 1} other(s)")

    vars(module).update(CODE="PO990", NAME="name-kin", LEVEL="warning", NEEDS="package",
                        SCOPE=scope, check=check)
    return rule_of(module)


def prompt(name: str, text: str = "Tell me about {{ topic }}.") -> str:
    return (f"name: {name}\ndescription: d\narguments:\n- name: topic\n  required: true\n"
            f"messages:\n- role: user\n  text: '{text}'\n")


@pytest.fixture
def pkg(tmp_path: Path) -> Path:
    root = Path(shutil.copytree(CORPUS, tmp_path / "corpus"))
    (root / "prompts" / "kin-a.prompt.yaml").write_text(prompt("kin-a"), encoding="utf-8")
    (root / "prompts" / "kin_b.prompt.yaml").write_text(prompt("Kin_A"), encoding="utf-8")
    return root


class Linter:
    """Full and incremental lint of one package with ``rules``."""

    def __init__(self, root: Path, rules: tuple[Rule, ...]) -> None:
        self.root, self.rules = root, rules
        base = settings(manifest_data(WorktreeSource(root)), [], [])
        self.conf = dataclasses.replace(base, enabled=base.enabled | {"PO990"})

    def full(self, source: WorktreeSource | None = None) -> Result:
        return lint_source(source or WorktreeSource(self.root), self.conf, rules=self.rules)

    def record(self) -> Record:
        source = WorktreeSource(self.root)
        result = self.full(source)
        assert result.deps is not None and result.names is not None
        return Record(blobs=self.blobs(source), findings=result.findings, deps=result.deps,
                      names=result.names, complete=result.package is not None)

    @staticmethod
    def blobs(source: WorktreeSource) -> dict[str, str]:
        return {p: blob_id(source.read(p)) for p in source.files()}

    def incremental(self, last: Record) -> tuple[list[Finding], str]:
        """What ``promptops lint`` would report from ``last``, and how it got there."""
        source = WorktreeSource(self.root)
        found = relint(source, self.blobs(source), last,
                       lambda subset: lint_source(subset, self.conf, rules=self.rules),
                       self.rules)
        if found is None:
            return self.full(source).findings, "full"
        return found.findings, "incremental"


def _describe(root: Path) -> None:  # an edit: the structure (names, files read) unchanged
    path = root / "prompts" / "kin-a.prompt.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("description: d",
                                                             "description: Kin, edited"))


CHANGES: dict[str, tuple[Callable[[Path], object], str]] = {
    "a name-kin prompt's description edited: its own package-scope finding, a full run": (
        _describe, "full"),
    "an unrelated prompt's template edited": (
        lambda root: (root / "templates" / "haiku.0.md.j2").write_text(
            "A haiku on {{ topic }}.  \n", encoding="utf-8"), "incremental"),
    "an unrelated prompt added": (
        lambda root: (root / "prompts" / "solo.prompt.yaml").write_text(
            prompt("solo"), encoding="utf-8"), "incremental"),
    "two prompts added whose names fold together": (
        lambda root: [(root / "prompts" / f"{n}.prompt.yaml").write_text(
            prompt(n), encoding="utf-8") for n in ("pair-x", "Pair_X")], "incremental"),
    "a prompt added whose name folds onto an old one: a full run": (
        lambda root: (root / "prompts" / "kin3.prompt.yaml").write_text(
            prompt("KIN-A"), encoding="utf-8"), "full"),
    "an unrelated prompt removed": (
        lambda root: (root / "prompts" / "act.prompt.yaml").unlink(), "incremental"),
    "a name-kin prompt removed: a full run": (
        lambda root: (root / "prompts" / "kin_b.prompt.yaml").unlink(), "full"),
}


@pytest.mark.parametrize("change", list(CHANGES), ids=list(CHANGES))
def test_a_package_scope_rule_relints_as_a_full_run_would(pkg: Path, change: str) -> None:
    rules = (*RULES, kin_rule("package"))
    linter = Linter(pkg, rules)
    last = linter.record()
    assert {f.path for f in last["findings"] if f.code == "PO990"} == {
        "prompts/kin-a.prompt.yaml", "prompts/kin_b.prompt.yaml"}
    apply, how = CHANGES[change]
    apply(pkg)
    found, used = linter.incremental(last)
    assert used == how
    assert found == linter.full().findings


def test_the_same_rule_declared_prompt_scope_is_relinted_wrongly(pkg: Path) -> None:
    """Without the declaration the edited prompt is judged alone and loses its finding."""
    linter = Linter(pkg, (*RULES, kin_rule("prompt")))
    last = linter.record()
    _describe(pkg)
    found, used = linter.incremental(last)
    assert used == "incremental"
    full = linter.full().findings
    assert [f for f in full if f.code == "PO990"] != [f for f in found if f.code == "PO990"]


def test_a_scope_the_engine_does_not_know_is_refused() -> None:
    with pytest.raises(ValueError, match="SCOPE 'everywhere'"):
        kin_rule("everywhere")


def test_the_registry_declares_the_cross_file_rules() -> None:
    """The four rules incremental lint used to name by code now say so themselves."""
    assert {r.code for r in RULES if r.scope == "package"} == {
        "PO106", "PO302", "PO303", "PO305"}
    assert {r.code for r in RULES if r.cycle} == {"PO302"}
