"""The tests' own Jinja template files, as texts: material for checks that compare a fast
path with Jinja's own answer on real templates (the review's shape cache, validation's
parse shapes). Never the held-out corpus, which is only measured."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent


def template_files() -> list[str]:
    """Every ``*.j2`` under tests/ outside a held-out part, in path order, as text."""
    out = []
    for path in sorted(TESTS.rglob("*.j2")):
        if "heldout" in path.parts:
            continue
        try:
            out.append(path.read_text(encoding="utf-8"))
        except UnicodeDecodeError:
            continue
    return out
