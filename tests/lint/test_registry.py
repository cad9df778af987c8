"""The registry lists every rule module once, in code order (the order fixes are applied in).

The table is what ``promptops/lint/registry.py`` imports from ``promptops.lint.rules``; a
module added under ``rules/`` but not to that import would silently never run.
"""

from __future__ import annotations

from pathlib import Path

from promptops.lint import registry

RULES_DIR = Path(registry.__file__).parent / "rules"


def test_every_rule_module_is_in_the_table_once_in_code_order() -> None:
    modules = sorted(p.stem for p in RULES_DIR.glob("po[0-9]*.py"))
    codes = [r.code for r in registry.RULES]
    assert [m[:5].upper() for m in modules] == codes
    assert len(set(codes)) == len(codes) == len(modules)
