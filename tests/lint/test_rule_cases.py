"""Every rule against its YAML case file: failing inputs at exact positions, passing
inputs clean, and what the rule's fix makes of a file (``fix:``) beside what it finds.
Adding a case is adding YAML, not code. Cases run in memory (sqlfluff's shape); only the
symlink cases need a disk."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers.repo import SYMLINKS, posix_only
from lint_helpers import build_case, case_files, lint_case, lint_positions, load_cases

from promptops.lint.registry import BY_CODE, RULES

_PARAMS = [
    pytest.param(rule, case, id=f"{rule}-{case['name']}",
                 marks=[posix_only(SYMLINKS)] if case.get("symlinks") else [])
    for path in case_files()
    for rule, cases in [load_cases(path)]
    for case in cases
]


@pytest.mark.parametrize(("rule", "case"), _PARAMS)
def test_rule_case(tmp_path: Path, rule: str, case: dict[str, Any]) -> None:
    if case.get("symlinks"):
        pkg, base = build_case(tmp_path, case)
        assert lint_positions(pkg, rule, base) == sorted(case["expect"])
    else:
        assert lint_case(rule, case) == sorted(case["expect"])
    fixed = case.get("fix")
    if fixed is not None:
        fix = BY_CODE[rule].fix
        assert fix is not None, f"{rule} has no fix, but the case says what it would make"
        for path, after in fixed.items():
            before = case["files"][path]
            assert fix(before) == after, path
            assert fix(after) == after, f"{path}: fixing the fixed text changes it again"
            assert lint_case(rule, {**case, "files": {**case["files"], path: after}}) == [
                f for f in sorted(case["expect"]) if not f.startswith(f"{path}:")]


def test_every_fixable_rule_says_what_its_fix_makes() -> None:
    fixed = {rule for path in case_files() for rule, cases in [load_cases(path)]
             if any("fix" in c for c in cases)}
    assert fixed == {r.code for r in RULES if r.fix is not None}


def test_every_rule_has_failing_and_passing_cases() -> None:
    seen: dict[str, tuple[int, int]] = {}
    for path in case_files():
        rule, cases = load_cases(path)
        assert path.stem == rule
        failing = sum(bool(c["expect"]) for c in cases)
        seen[rule] = (failing, len(cases) - failing)
    for r in RULES:
        failing, passing = seen.get(r.code, (0, 0))
        assert failing >= 1 and passing >= 1, f"{r.code} needs a failing and a passing case"


def test_every_rule_documents_both_examples() -> None:
    for r in RULES:
        assert "Fails" in r.doc and "Passes" in r.doc, r.code
        assert r.level in ("error", "warning", "info") and r.name == r.name.lower(), r.code
