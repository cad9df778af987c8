"""A prompt whose smoke case cannot pass is marked in its file (issue 15), without the mark
hiding a real failure: ``smoke: {skip: why}`` holds only while the generated arguments are
refused (-32602); a template failure, or a smoke case that renders after all, fails.
``smoke: {error: ...}`` passes when the smoke case fails exactly so."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.repo import write_files
from lxml import etree
from testing_helpers import MANIFEST, junit_errors, promptops

# The placeholder 'example sha' cannot match the pattern: the smoke case is refused (-32602).
COMMIT = """\
description: Explains a commit
arguments:
  - name: sha
    description: The commit id
    required: true
    pattern: "[0-9a-f]{40}"
messages:
  - role: user
    text: "Explain commit {{ sha }}."
"""
SKIP = "smoke:\n  skip: a commit id is 40 hex digits; tests/commit.test.yaml sends a real one\n"


def _pkg(root: Path, prompt: str) -> Path:
    write_files(root, {"promptops.yaml": MANIFEST, "prompts/commit.prompt.yaml": prompt})
    return root


def _cases(root: Path) -> tuple[int, list[dict[str, object]]]:
    proc = promptops("test", "--format", "json", cwd=root)
    return proc.returncode, json.loads(proc.stdout)["cases"]


def test_unmarked_smoke_case_fails_and_says_how_to_mark_it(tmp_path: Path) -> None:
    proc = promptops("test", cwd=_pkg(tmp_path, COMMIT))
    assert proc.returncode == 1
    assert "or say why it cannot in the prompt file (`smoke: {skip: <why>}`)" in proc.stdout


def test_skip_with_a_reason_is_reported_skipped(tmp_path: Path) -> None:
    root = _pkg(tmp_path, COMMIT + SKIP)
    code, cases = _cases(root)
    assert code == 0
    assert [(c["name"], c["status"], c["skip"]) for c in cases] == [
        ("smoke", "skipped", "a commit id is 40 hex digits; tests/commit.test.yaml sends a real "
                             "one")]
    proc = promptops("-v", "test", cwd=root)
    assert proc.returncode == 0
    assert ("SKIPPED commit::smoke (a commit id is 40 hex digits; tests/commit.test.yaml sends "
            "a real one)") in proc.stdout.splitlines()
    assert proc.stdout.splitlines()[-1] == "0 passed, 0 failed, 1 skipped"
    junit = tmp_path / "junit.xml"
    assert promptops("test", "--junit-xml", str(junit), cwd=root).returncode == 0
    assert junit_errors(junit.read_bytes()) == []
    skipped = etree.parse(str(junit)).find(".//skipped")
    assert skipped is not None and skipped.text is not None and "40 hex" in skipped.text


def test_skip_does_not_hide_a_template_that_fails(tmp_path: Path) -> None:
    broken = COMMIT.replace('"Explain commit {{ sha }}."',
                            '"{{ 1 // 0 }} Explain commit {{ sha }}."').replace(
        '    pattern: "[0-9a-f]{40}"\n', "")
    code, cases = _cases(_pkg(tmp_path, broken + SKIP))
    assert code == 1
    assert cases[0]["status"] == "failed"
    message = cases[0]["failures"][0]["message"]  # type: ignore[index]
    assert message.startswith("render failed with error -32603")
    assert "covers the smoke case's arguments being refused (-32602)" in message


def test_a_mark_that_outlived_its_reason_fails(tmp_path: Path) -> None:
    fixed = COMMIT.replace("    required: true\n",
                           "    required: true\n    examples: [" + "a" * 40 + "]\n")
    code, cases = _cases(_pkg(tmp_path, fixed + SKIP))
    assert code == 1
    assert cases[0]["status"] == "failed"
    assert cases[0]["failures"] == [{"message": (
        "the smoke case renders, but the prompt file says it cannot (`smoke: skip: a commit id "
        "is 40 hex digits; tests/commit.test.yaml sends a real one`): remove the mark")}]


def test_an_expected_error_passes_only_when_it_is_that_error(tmp_path: Path) -> None:
    right = COMMIT + "smoke:\n  error: {code: -32602, message_contains: sha}\n"
    code, cases = _cases(_pkg(tmp_path, right))
    assert (code, cases[0]["status"]) == (0, "passed")
    wrong = COMMIT + "smoke:\n  error: {code: -32603}\n"
    code, cases = _cases(_pkg(tmp_path, wrong))
    assert (code, cases[0]["status"]) == (1, "failed")
    assert "error code is -32602, expected -32603" in cases[0]["failures"][0]["message"]  # type: ignore[index]


def test_smoke_false_without_a_reason_is_a_positioned_error(tmp_path: Path) -> None:
    proc = promptops("test", cwd=_pkg(tmp_path, COMMIT + "smoke: false\n"))
    assert proc.returncode == 1
    assert "prompts/commit.prompt.yaml:10:8" in proc.stderr
    assert "`smoke: false` needs a reason: write `smoke: {skip: <why the smoke case cannot " \
        "pass>}`" in proc.stderr
    both = COMMIT + "smoke:\n  skip: why\n  error: {code: -32602}\n"
    proc = promptops("test", cwd=_pkg(tmp_path, both))
    assert proc.returncode == 1
    assert "smoke needs exactly one of `skip` (a reason) or `error`" in proc.stderr


def test_check_passes_a_marked_package(tmp_path: Path) -> None:
    root = _pkg(tmp_path, COMMIT + SKIP)
    write_files(root, {"tests/commit.test.yaml": (
        "prompt: commit\ncases:\n  - name: real\n    arguments: {sha: " + "a" * 40 + "}\n"
        "    expect: {contains: [Explain]}\n")})
    proc = promptops("check", ".", cwd=root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
