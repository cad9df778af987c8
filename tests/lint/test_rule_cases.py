"""Every rule against its YAML case file: failing inputs at exact positions, passing
inputs clean. Adding a case is adding YAML, not code."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lint_helpers import build_case, case_files, lint_positions, load_cases
from repo_helpers import SYMLINKS, posix_only

from promptops.lint.registry import RULES

_PARAMS = [
    pytest.param(rule, case, id=f"{rule}-{case['name']}",
                 marks=[posix_only(SYMLINKS)] if case.get("symlinks") else [])
    for path in case_files()
    for rule, cases in [load_cases(path)]
    for case in cases
]


@pytest.mark.parametrize(("rule", "case"), _PARAMS)
def test_rule_case(tmp_path: Path, rule: str, case: dict[str, Any]) -> None:
    pkg, base = build_case(tmp_path, case)
    assert lint_positions(pkg, rule, base) == sorted(case["expect"])


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
