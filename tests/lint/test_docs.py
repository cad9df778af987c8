"""docs/rules.md is generated from the rule docstrings and must be current; check gates
on lint."""

from __future__ import annotations

from pathlib import Path

from helpers.repo import REPO_ROOT, write_files
from lint_helpers import run_cli

from promptops.lint.docs import render
from promptops.lint.registry import RULES


def test_rules_md_is_current() -> None:
    committed = (REPO_ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert committed == render(), "run: python -m promptops.lint.docs > docs/rules.md"


def test_rules_md_documents_every_rule_with_examples() -> None:
    text = render()
    for r in RULES:
        section = text.split(f"### {r.code} {r.name}\n", 1)[1].split("\n### ", 1)[0]
        assert "**Fails" in section and "**Passes" in section and "```yaml" in section


def test_check_runs_lint(tmp_path: Path) -> None:
    files = {
        "promptops.yaml": "name: demo\nversion: 1.0.0\n",
        "prompts/greet.prompt.yaml": "description: d\nmessages:\n  - role: user\n"
        "    text: Hi.\n  - role: user\n    text: \"{{ nobody }}\"\n",
    }
    write_files(tmp_path, files)
    code, _, err = run_cli("check", str(tmp_path))
    assert code == 1
    assert "prompts/greet.prompt.yaml:6:15: PO201 [error]" in err
    write_files(tmp_path, {"prompts/greet.prompt.yaml": files["prompts/greet.prompt.yaml"]
                           .replace("{{ nobody }}", "Bye.")})
    code, _, err = run_cli("check", str(tmp_path))
    assert code == 0, err
    assert "lint: no problems found" in err
