"""`promptops rules [CODE|NAME]`: the rule table, or one rule's documentation."""

from __future__ import annotations

from promptops.console import Console
from promptops.errors import UsageError
from promptops.lint.registry import RULES, lookup


def run(*, key: str | None, console: Console) -> int:
    if key is None:
        for r in RULES:
            fix = " (fixable)" if r.fixable else ""
            console.echo(f"{r.code}  {r.name:<30} {r.level:<8} {r.summary}{fix}")
        return 0
    rule = lookup(key)
    if rule is None:
        raise UsageError(f"unknown rule {key!r}; `promptops rules` lists them")
    fix = ", fixable with --fix" if rule.fixable else ""
    console.echo(f"{rule.code} {rule.name} ({rule.level}{fix})\n")
    console.echo(rule.doc.strip())
    return 0
