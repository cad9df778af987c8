"""`promptops rules [CODE|NAME]`: the rule table, or one rule's documentation."""

from __future__ import annotations

from promptops.console import echo
from promptops.errors import UsageError
from promptops.lint.registry import RULES, lookup


def run(key: str | None) -> int:
    if key is None:
        for r in RULES:
            fix = " (fixable)" if r.fixable else ""
            echo(f"{r.code}  {r.name:<30} {r.level:<8} {r.summary}{fix}")
        return 0
    rule = lookup(key)
    if rule is None:
        raise UsageError(f"unknown rule {key!r}; `promptops rules` lists them")
    fix = ", fixable with --fix" if rule.fixable else ""
    echo(f"{rule.code} {rule.name} ({rule.level}{fix})\n")
    echo(rule.doc.strip())
    return 0
