"""A package with 27 deliberate format mistakes across 16 files: `promptops check` must
report every one at the exact line and column, with a message that says how to fix it.

Each expected problem also names the text found at its position, so a position that
drifts (off by one, or on the wrong node) fails even if the message is right.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from helpers.repo import FIXTURES, make_repo, run_cli

PACKAGE = FIXTURES / "format_errors"

# (path, line, col, text at that position, message)
EXPECTED: list[tuple[str, int, int, str, str]] = [
    ("promptops.yaml", 1, 7, "Acme Prompts",
     "name: 'Acme Prompts' is not valid: use lowercase letters, digits, '.', '_' and '-', "
     "starting and ending with a letter or digit, at most 64 characters (e.g. acme-prompts)"),
    ("promptops.yaml", 2, 10, '"1.0"',
     "version: '1.0' is not valid: use a SemVer 2.0.0 version such as 1.4.0 or 2.0.0-rc.1"),
    ("promptops.yaml", 3, 1, "descripton:",
     "unknown key 'descripton'; did you mean 'description'?"),
    ("prompts/b/other.prompt.yaml", 2, 7, "review",
     "prompt name 'review' is already used by prompts/a/review.prompt.yaml"),
    ("prompts/bad name.prompt.yaml", 1, 1, "messages:",
     "file name gives prompt name 'bad name', which is not valid; set `name:`"),
    ("prompts/dupkey.prompt.yaml", 2, 1, "title: Two",
     "`title` appears twice in this mapping (first on line 1): keep one; YAML would "
     "silently use only the last"),
    ("prompts/empty.prompt.yaml", 1, 11, "[]",
     "messages: List should have at least 1 item after validation, not 0"),
    ("prompts/latin1.prompt.yaml", 1, 17, "\ufffd", "file is not valid UTF-8"),
    ("prompts/list.prompt.yaml", 1, 1, "- role",
     "expected a YAML mapping at the top of the file"),
    ("prompts/nomessages.prompt.yaml", 1, 1, "title:", "missing required key 'messages'"),
    ("prompts/refs.prompt.yaml", 4, 15, "t/missing.j2",
     "template 't/missing.j2' not found in the package"),
    ("prompts/refs.prompt.yaml", 9, 7, "{% if x %}",
     "template: Unexpected end of template. Jinja was looking for the following tags: 'elif' "
     "or 'else' or 'endif'. The innermost block that needs to be closed is 'if'."),
    ("prompts/refs.prompt.yaml", 11, 19, "resources/absent.png",
     "file 'resources/absent.png' not found in the package"),
    ("prompts/refs.prompt.yaml", 15, 11, "'Context: {% include",
     "include '../outside.j2' is outside the package or not normalised"),
    ("prompts/refs.prompt.yaml", 17, 47, "/etc/hostname", "'/etc/hostname' is outside the package"),
    ("prompts/schema.prompt.yaml", 1, 1, "titel:", "unknown key 'titel'; did you mean 'title'?"),
    ("prompts/schema.prompt.yaml", 3, 11, '""',
     "arguments.0.name: '' is not valid: an argument name is 1 to 128 characters with no "
     "control characters (a template reads one that is not an identifier as args[\"name\"])"),
    ("prompts/schema.prompt.yaml", 5, 15, '"yes"',
     "arguments.1.required: Input should be a valid boolean; write true or false, unquoted"),
    ("prompts/schema.prompt.yaml", 6, 14, '"([a-z]+"',
     "arguments.1.pattern: pattern is not a valid regular expression: missing ), "
     "unterminated subpattern at position 0"),
    ("prompts/schema.prompt.yaml", 7, 16, "0",
     "arguments.1.maxLength: Input should be greater than or equal to 1"),
    ("prompts/schema.prompt.yaml", 9, 11, "developer",
     "messages.0.role: Input should be 'user', 'assistant' or 'system'"),
    ("prompts/schema.prompt.yaml", 11, 5, "role: user",
     "messages.1: a message needs exactly one content key of text, template, resource, image, "
     "audio, resource_link, history (found: text, template)"),
    ("prompts/schema.prompt.yaml", 15, 12, "resources/x.png",
     "messages.2.image: Input should be a valid dictionary or instance of MediaFile; "
     "expected a mapping with keys: file, mimeType"),
    ("prompts/tabs.prompt.yaml", 3, 1, "\ttext",
     "this line is indented with a tab; YAML indentation must be spaces: replace the tab "
     "with spaces"),
    ("prompts/unclosed.prompt.yaml", 1, 14, '"an unclosed',
     'this "..." string is never closed: add the closing " at the end of the value on line 1, '
     "or, for text over several lines, use a block scalar (`key: |`)"),
    ("prompts/unquoted.prompt.yaml", 5, 11, "{{ x }}",
     "the value of `text` starts with '{{', which YAML reads as a mapping: quote it "
     '(text: "{{ x }}") or use a block scalar (text: |)'),
    ("t/broken.j2", 2, 1, "{{ oops(", "template: unexpected 'end of template'"),
]


def check(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_cli("check", *args, cwd=cwd)


def expected_stderr() -> str:
    lines = [f"{p}:{line}:{col}: {msg}" for p, line, col, _, msg in EXPECTED]
    return "\n".join([*lines, f"{len(EXPECTED)} problems found"]) + "\n"


@pytest.mark.parametrize(("path", "line", "col", "text", "message"), EXPECTED,
                         ids=[f"{e[0]}:{e[1]}" for e in EXPECTED])
def test_position_points_at_the_mistake(
    path: str, line: int, col: int, text: str, message: str
) -> None:
    source = (PACKAGE / path).read_bytes().decode("utf-8", errors="replace").splitlines()
    assert source[line - 1][col - 1:].startswith(text), (path, line, col, message)


def test_check_reports_every_mistake_in_the_working_tree() -> None:
    proc = check(str(PACKAGE), cwd=PACKAGE.parent)
    assert proc.stdout == ""
    assert proc.stderr == expected_stderr()
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr


def test_check_reports_the_same_at_a_commit(tmp_path: Path) -> None:
    """--ref reads git objects: the positions and messages must not change."""
    files: dict[str, str | bytes] = {
        p.relative_to(PACKAGE).as_posix(): p.read_bytes() for p in PACKAGE.rglob("*")
        if p.is_file()
    }
    repo_root = tmp_path / "repo"
    make_repo(repo_root, {f"pkg/{k}": v for k, v in files.items()})
    shutil.rmtree(repo_root / "pkg" / "prompts")  # the working tree no longer matters
    proc = check("pkg", "--ref", "HEAD", cwd=repo_root)
    assert proc.stderr == expected_stderr()
    assert proc.returncode == 1


def test_the_fixture_has_at_least_twenty_mistakes_across_files() -> None:
    assert len(EXPECTED) >= 20
    assert len({e[0] for e in EXPECTED}) >= 10
