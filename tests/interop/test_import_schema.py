"""``promptops import`` gives editors the schemas, as ``init`` does (issue 16's "init/import
write a correct relative $schema"): the schema files, and a modeline relative to each file."""

from __future__ import annotations

import json
import re
from pathlib import Path

from helpers.repo import run_cli

from promptops.scaffold import modeline, schema_for

MODELINE = re.compile(r"# yaml-language-server: \$schema=(\S+)\n")


def test_import_writes_the_schemas_and_a_modeline_that_resolves(tmp_path: Path) -> None:
    source = tmp_path / "review.prompt.md"
    source.write_text("---\ndescription: Review code\n---\nReview ${input:code}\n")
    out = tmp_path / "pkg"
    done = run_cli("import", str(source), "-o", str(out))
    assert done.returncode == 0, done.stderr
    files = {"promptops.yaml": "manifest", "prompts/review.prompt.yaml": "prompt"}
    for rel, kind in files.items():
        first = (out / rel).read_text(encoding="utf-8").splitlines(keepends=True)[0]
        found = MODELINE.fullmatch(first)
        assert found, first
        schema = (out / rel).parent / found.group(1)  # resolved from the file, as the LSP does
        assert json.loads(schema.read_text(encoding="utf-8")) == schema_for(kind)
    assert run_cli("check", str(out)).returncode == 0  # the comment changes nothing served


def test_a_file_in_a_subfolder_climbs_to_the_package_root() -> None:
    assert modeline("prompts/team/x.prompt.yaml", "prompt") == \
        "# yaml-language-server: $schema=../../.promptops/schema/prompt.json\n"
    assert modeline("promptops.yaml", "manifest") == \
        "# yaml-language-server: $schema=.promptops/schema/manifest.json\n"
