"""The text format, exactly: the excerpt and caret without colour (a CI log), lines made safe
to print, and a rule's many findings summarised in one entry (issue 15's volume, issue 16's
"source excerpts with a caret printed with or without colour")."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.repo import write_files
from lint_helpers import promptops

from promptops.lint.output.text import excerpt

GREET = (
    "description: Greets someone\narguments:\n  - name: who\n    description: Who\n"
    "    required: true\nmessages:\n  - role: user\n    text: \"Greet {{ who }} {{ whom }}.\"\n"
)


def test_plain_output_shows_the_line_and_a_caret(tmp_path: Path) -> None:
    write_files(tmp_path, {"promptops.yaml": "name: demo\nversion: 1.0.0\n",
                           "prompts/greet.prompt.yaml": GREET})
    proc = promptops("lint", ".", cwd=tmp_path)  # NO_COLOR=1: the plain text a CI log gets
    assert proc.returncode == 1
    assert proc.stdout == (
        "prompts/greet.prompt.yaml:8:31: PO201 [error] variable 'whom' is not a declared "
        "argument; did you mean 'who'?\n"
        "      text: \"Greet {{ who }} {{ whom }}.\"\n"
        "                                ^\n"
        "1 error, 0 warnings\n"
    )
    assert "\x1b[" not in proc.stdout


def test_colour_output_has_the_same_excerpt(tmp_path: Path) -> None:
    write_files(tmp_path, {"promptops.yaml": "name: demo\nversion: 1.0.0\n",
                           "prompts/greet.prompt.yaml": GREET})
    proc = promptops("--color", "always", "lint", ".", cwd=tmp_path)
    lines = proc.stdout.splitlines()
    assert lines[1] == "      text: \"Greet {{ who }} {{ whom }}.\""
    assert lines[2] == " " * 32 + "\x1b[32m\x1b[1m^\x1b[0m"


def test_excerpt_keeps_tabs_and_counts_wide_characters() -> None:
    assert excerpt("\tx = {{ y }}", 6) == ("\tx = {{ y }}", "\t    ")
    assert excerpt("名前: {{ y }}", 5) == ("名前: {{ y }}", "      ")


def test_excerpt_escapes_what_would_act_on_a_terminal() -> None:
    line, pad = excerpt("a\x1b[2Jb\u202ec {{ x }}", 10)
    assert line == "a\\u001b[2Jb\\u202ec {{ x }}"
    assert pad == " " * (len(line) - len("{{ x }}"))


def test_excerpt_of_a_long_line_is_a_window_around_the_column() -> None:
    line, pad = excerpt("x" * 500 + "{{ bad }}" + "y" * 500, 501)
    assert line.startswith("…x") and line.endswith("y…")
    assert len(line) == 122
    assert line[len(pad):].startswith("{{ bad }}")
    assert excerpt("short", 99) == ("short", "     ")


def _undescribed(n: int) -> dict[str, str]:
    files = {"promptops.yaml": "name: demo\nversion: 1.0.0\n"}
    for i in range(n):
        files[f"prompts/p{i}.prompt.yaml"] = "messages:\n  - role: user\n    text: Hi.\n"
    return files


def test_many_missing_descriptions_are_one_summary_entry(tmp_path: Path) -> None:
    write_files(tmp_path, _undescribed(7))
    proc = promptops("lint", ".", cwd=tmp_path)
    assert proc.returncode == 0
    assert proc.stdout == (
        "PO401 [warning] missing-description: 7 prompts have no description, or arguments "
        "without one (an MCP client shows its user nothing to go by); `promptops lint "
        "--select PO401` lists each:\n"
        "  prompts/p0.prompt.yaml, prompts/p1.prompt.yaml, prompts/p2.prompt.yaml, "
        "prompts/p3.prompt.yaml and 3 more\n"
        "0 errors, 7 warnings\n"
    )
    listed = promptops("lint", ".", "--select", "PO401", cwd=tmp_path).stdout.splitlines()
    assert [line.split(": ", 1)[0] for line in listed if ": PO401" in line] == [
        f"prompts/p{i}.prompt.yaml:1:1" for i in range(7)]
    assert listed[1] == "  messages:" and listed[2] == "  ^"
    doc = json.loads(promptops("lint", ".", "--format", "json", cwd=tmp_path).stdout)
    assert len(doc["findings"]) == 7 and doc["summary"]["warnings"] == 7


def test_a_few_missing_descriptions_are_listed_one_by_one(tmp_path: Path) -> None:
    write_files(tmp_path, _undescribed(5))
    out = promptops("lint", ".", cwd=tmp_path).stdout.splitlines()
    assert [line for line in out if "PO401" in line] == [
        f"prompts/p{i}.prompt.yaml:1:1: PO401 [warning] prompt 'p{i}' has no description"
        for i in range(5)]


def test_github_annotations_put_the_bulk_advice_last(tmp_path: Path) -> None:
    """GitHub keeps 10 warning annotations per step: PO401's many must not take them all."""
    files = _undescribed(12)
    files["resources/notes.md"] = "note  \n"
    write_files(tmp_path, files)
    lines = promptops("lint", str(tmp_path), "--format", "github").stdout.splitlines()
    titles = [line.split("title=", 1)[1].split("::", 1)[0] for line in lines[:-1]]
    assert titles == ["PO504 trailing-whitespace"] + ["PO401 missing-description"] * 12
