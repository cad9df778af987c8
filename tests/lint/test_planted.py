"""The acceptance test: one planted instance of every rule, found exactly where planted.

The package is copied to a temp folder and run through the real CLI: json output,
SARIF validated against the official 2.1.0 schema, then --fix and a second run that
reports only what cannot be fixed.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import jsonschema
import pytest
from helpers.repo import REPO_ROOT
from lint_helpers import PLANTED, lint_json, promptops

from promptops.lint.registry import RULES

EXPECTED = [
    ("partials/cycle_b.j2", 2, 4, "PO302"),
    ("partials/unused.j2", 1, 1, "PO305"),
    ("prompts/dup-name.prompt.yaml", 1, 1, "PO106"),
    ("prompts/p101_bad_yaml.prompt.yaml", 4, 11, "PO101"),
    ("prompts/p102_schema.prompt.yaml", 5, 5, "PO102"),
    ("prompts/p103_syntax.prompt.yaml", 7, 7, "PO103"),
    ("prompts/p104_unknown_tag.prompt.yaml", 6, 7, "PO104"),
    ("prompts/p105_literal.prompt.yaml", 10, 18, "PO105"),
    ("prompts/p107_mismatch.prompt.yaml", 1, 7, "PO107"),
    ("prompts/p108_order.prompt.yaml", 5, 1, "PO108"),
    ("prompts/p201_undeclared.prompt.yaml", 6, 21, "PO201"),
    ("prompts/p202_unused.prompt.yaml", 6, 11, "PO202"),
    ("prompts/p203_required_default.prompt.yaml", 6, 5, "PO203"),
    ("prompts/p204_enum_default.prompt.yaml", 5, 14, "PO204"),
    ("prompts/p205_pattern_default.prompt.yaml", 5, 14, "PO205"),
    ("prompts/p206_shadow.prompt.yaml", 3, 11, "PO206"),
    ("prompts/p207_unguarded.prompt.yaml", 12, 25, "PO207"),
    ("prompts/p208_costly_pattern.prompt.yaml", 6, 14, "PO208"),
    ("prompts/p301_missing_include.prompt.yaml", 6, 7, "PO301"),
    ("prompts/p303_depth.prompt.yaml", 12, 10, "PO303"),
    ("prompts/p304_outside.prompt.yaml", 5, 7, "PO304"),
    ("prompts/p306_missing_resource.prompt.yaml", 7, 13, "PO306"),
    ("prompts/p401_no_description.prompt.yaml", 1, 1, "PO401"),
    ("prompts/p402_system.prompt.yaml", 8, 11, "PO402"),
    ("prompts/p403_big_enum.prompt.yaml", 6, 5, "PO403"),
    ("prompts/p404_media.prompt.yaml", 7, 13, "PO404"),
    ("prompts/p405_empty_resource.prompt.yaml", 8, 13, "PO405"),
    ("prompts/p406_empty_message.prompt.yaml", 6, 11, "PO406"),
    ("prompts/p508_long.prompt.yaml", 10, 11, "PO508"),
    ("prompts/p509_undelimited.prompt.yaml", 8, 22, "PO509"),
    ("prompts/p510_unsafe.prompt.yaml", 6, 17, "PO510"),
    ("prompts/p511_exhaustion.prompt.yaml", 6, 14, "PO511"),
    ("resources/comment.md", 2, 1, "PO503"),
    ("resources/crlf.md", 1, 10, "PO505"),
    ("resources/hidden.md", 1, 12, "PO502"),
    ("resources/nonl.md", 1, 23, "PO507"),
    ("resources/secret.md", 2, 6, "PO501"),
    ("resources/tab.md", 1, 9, "PO506"),
    ("resources/ws.md", 2, 10, "PO504"),
]
FIXABLE = {"PO108", "PO504", "PO505", "PO507"}
INFO = {r.code for r in RULES if r.level == "info"}  # shown when selected, not by default
DEFAULT = [e for e in EXPECTED if e[3] not in INFO]


@pytest.fixture
def planted(tmp_path: Path) -> Path:
    return Path(shutil.copytree(PLANTED, tmp_path / "planted"))


def _found(doc: dict[str, object]) -> list[tuple[str, int, int, str]]:
    return [(f["path"], f["line"], f["column"], f["code"]) for f in doc["findings"]]  # type: ignore[attr-defined]


def test_every_rule_is_planted_once_except_versioning() -> None:
    planted = sorted(code for *_, code in EXPECTED)
    assert planted == sorted(r.code for r in RULES if not r.code.startswith("PO6"))


def test_json_reports_exactly_the_planted_findings(planted: Path) -> None:
    code, doc = lint_json(planted)
    assert code == 1
    assert _found(doc) == DEFAULT
    assert doc["version"] == 1
    assert doc["summary"] == {"errors": 21, "warnings": 17, "fixable": 4}


def test_info_rules_yield_their_planted_problems_when_selected(planted: Path) -> None:
    proc = promptops("lint", str(planted), "--format", "json", *[
        a for code in sorted(INFO) for a in ("--select", code)])
    doc = json.loads(proc.stdout)
    assert INFO and _found(doc) == [e for e in EXPECTED if e[3] in INFO]
    assert doc["summary"]["info"] == len(INFO)
    assert proc.returncode == 0, "info never fails"


def test_sarif_validates_against_the_schema(planted: Path) -> None:
    default = REPO_ROOT / "tests" / "data" / "sarif-schema-2.1.0.json"
    schema = json.loads(Path(os.environ.get("SARIF_SCHEMA", default)).read_text())
    proc = promptops("lint", str(planted), "--format", "sarif")
    assert proc.returncode == 1, proc.stderr
    sarif = json.loads(proc.stdout)
    jsonschema.validators.validator_for(schema)(schema).validate(sarif)
    run = sarif["runs"][0]
    assert {r["id"] for r in run["tool"]["driver"]["rules"]} == {r.code for r in RULES}
    assert all(r["help"]["text"] for r in run["tool"]["driver"]["rules"])
    assert len(run["results"]) == len(DEFAULT)
    prints = [r["partialFingerprints"]["primaryLocationLineHash"] for r in run["results"]]
    assert len(set(prints)) == len(prints)


def test_fingerprints_survive_a_line_move(planted: Path) -> None:
    def prints() -> dict[str, str]:
        sarif = json.loads(promptops("lint", str(planted), "--format", "sarif").stdout)
        return {r["ruleId"]: r["partialFingerprints"]["primaryLocationLineHash"]
                for r in sarif["runs"][0]["results"]}

    before = prints()
    path = planted / "resources" / "secret.md"
    path.write_text("Moved down.\n\n" + path.read_text())
    after = prints()
    assert after["PO501"] == before["PO501"]


def test_fix_then_second_run_reports_only_the_unfixable(planted: Path) -> None:
    comment_file = planted / "prompts" / "p108_order.prompt.yaml"
    proc = promptops("lint", str(planted), "--fix", "--format", "json")
    assert proc.returncode == 1, proc.stderr
    assert _found(json.loads(proc.stdout)) == [e for e in DEFAULT if e[3] not in FIXABLE]
    code, doc = lint_json(planted)
    assert code == 1
    assert _found(doc) == [e for e in DEFAULT if e[3] not in FIXABLE]
    fixed = comment_file.read_text()
    assert fixed.index("description:") < fixed.index("arguments:")
    assert "# keep this comment" in fixed
    assert (planted / "resources" / "crlf.md").read_bytes() == b"Line one.\nLine two.\n"
    assert (planted / "resources" / "nonl.md").read_text().endswith("end.\n")


def test_diff_shows_fixes_without_writing(planted: Path) -> None:
    before = (planted / "resources" / "ws.md").read_bytes()
    proc = promptops("lint", str(planted), "--diff")
    assert proc.returncode == 1
    assert "+++ b/resources/ws.md" in proc.stdout and "-Line two.   " in proc.stdout
    assert (planted / "resources" / "ws.md").read_bytes() == before
