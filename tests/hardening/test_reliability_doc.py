"""docs/reliability.md is exactly what gen_reliability.py makes of the committed records,
and every record names a test that exists (so a removed test cannot leave a stale row)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from gen_reliability import DOC, RECORDS, render

TESTS = Path(__file__).resolve().parent.parent


def test_the_document_is_generated_from_the_records() -> None:
    assert DOC.read_text(encoding="utf-8") == render(), (
        "docs/reliability.md is stale: run python tests/hardening/gen_reliability.py")


def test_every_record_names_an_existing_test() -> None:
    records = sorted(RECORDS.glob("*.json"))
    assert len(records) >= 40
    for path in records:
        test = json.loads(path.read_text(encoding="utf-8"))["test"]
        module, function = re.match(r"([\w.]+)::(\w+)", test).groups()  # type: ignore[union-attr]
        sources = [p for p in TESTS.rglob(module) if p.is_file()]
        assert sources and f"def {function}(" in sources[0].read_text(), (path.name, test)
