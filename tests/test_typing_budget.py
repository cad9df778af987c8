"""A ratchet on untyped stage data: ``dict[str, Any]`` in ``promptops/``.

Issue 13 asks the count to fall by at least 80% from the 77 it had: the bundle, the
render result and the stage values are TypedDicts or dataclasses now, and data read from
outside is ``dict[str, object]`` (narrowed where it is used). What is left is the JSON
boundary (serve's one ``Json`` alias), pydantic fields whose schema is published, and
lint internals (issue 15). The bound only goes down.
"""

from __future__ import annotations

import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "promptops"
BEFORE = 77  # main at f2308cf, before issue 13
BUDGET = 11


def test_untyped_dicts_stay_within_budget() -> None:
    hits = [f"{p.relative_to(PACKAGE)}:{n}"
            for p in sorted(PACKAGE.rglob("*.py"))
            for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
            if re.search(r"dict\[str, Any\]", line)]
    assert len(hits) <= BUDGET, "\n".join(hits)
    assert BUDGET <= BEFORE * 0.2
