"""Fixes that are safe by proof: `lint --fix` never changes what a package serves.

Each test renders the package's outputs itself (every test case and smoke case, and every
prompt's listing) before and after the command, with the same function the proof uses, so
the claim is checked, not assumed.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from helpers.repo import write_files
from lint_helpers import promptops

from promptops.commands.lint import _samples
from promptops.lint.proof import outputs
from promptops.pipeline.source import WorktreeSource

CORPUS = Path(__file__).parent / "corpus" / "package"
MANIFEST = "name: demo\nversion: 1.0.0\n"


def _outputs(pkg: Path) -> dict[str, str]:
    return outputs(WorktreeSource(pkg), _samples)


def test_fix_on_the_corpus_changes_no_rendered_output(tmp_path: Path) -> None:
    pkg = Path(shutil.copytree(CORPUS, tmp_path / "corpus"))
    before = _outputs(pkg)
    assert len(before) > 200  # listings and the corpus's own input sets, rendered
    proc = promptops("lint", str(pkg), "--fix")
    assert proc.returncode in (0, 1), proc.stderr
    assert _outputs(pkg) == before
    # the trailing whitespace the corpus prompts send is refused, not silently kept
    assert "not fixed: PO504 in templates/haiku.0.md.j2 would change the rendered output " \
        "of haiku (smoke)" in proc.stderr
    # contoso-chat reads an object argument; no string sample renders it, so nothing is proven
    assert "not fixed: PO504 in templates/contoso-chat.0.md.j2 cannot be proven safe: no " \
        "argument sample of prompt 'contoso-chat' renders" in proc.stderr
    assert "fixed" not in proc.stderr.replace("not fixed", "")


def test_a_fix_that_would_change_output_is_refused_and_a_safe_one_applied(
        tmp_path: Path) -> None:
    prompt = ("description: d\narguments:\n  - name: q\n    description: Q\n    required: true\n"
              "messages:\n  - role: user\n    template: t.md.j2\n"
              "  - role: user\n    resource:\n      uri: file:///notes.md\n"
              "      file: resources/notes.md\n")
    write_files(tmp_path, {
        "promptops.yaml": MANIFEST,
        "prompts/p.prompt.yaml": prompt.replace("\n", "\r\n"),  # PO505: YAML reads it the same
        "t.md.j2": "Answer {{ q }}.  \nBe brief.\n",  # PO504: the model gets those spaces
        "resources/notes.md": "embedded, no final newline",  # PO507: the resource text changes
        "resources/spare.md": "served by nothing",  # PO507 too, but nothing renders it
    })
    before = _outputs(tmp_path)
    proc = promptops("lint", str(tmp_path), "--fix")
    assert _outputs(tmp_path) == before
    assert "not fixed: PO504 in t.md.j2 would change the rendered output of p (" \
        in proc.stderr
    assert "not fixed: PO507 in resources/notes.md" in proc.stderr
    assert (tmp_path / "t.md.j2").read_text() == "Answer {{ q }}.  \nBe brief.\n"
    assert (tmp_path / "resources/notes.md").read_text() == "embedded, no final newline"
    assert b"\r\n" not in (tmp_path / "prompts/p.prompt.yaml").read_bytes()
    assert (tmp_path / "resources/spare.md").read_text().endswith("\n")


def test_unsafe_fixes_apply_the_rest_and_show_the_rendered_difference(
        tmp_path: Path) -> None:
    write_files(tmp_path, {
        "promptops.yaml": MANIFEST,
        "prompts/p.prompt.yaml": "description: d\nmessages:\n  - role: user\n"
                                 "    template: t.md.j2\n",
        "t.md.j2": "Be brief.   \nThanks.\n",
    })
    before = _outputs(tmp_path)
    proc = promptops("lint", str(tmp_path), "--fix", "--unsafe-fixes")
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "t.md.j2").read_text() == "Be brief.\nThanks.\n"
    assert _outputs(tmp_path) != before
    assert "these fixes change what the package serves" in proc.stderr
    assert "rendered before: p (smoke)" in proc.stderr
