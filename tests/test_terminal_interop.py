"""import, export and ls show progress on a terminal and none in a CI log or a pipe.

The same pseudo-terminal as tests/test_terminal.py: a real ``promptops`` process whose
stdio is a pty's slave side. On a terminal rich hides the cursor while it draws; in a CI
log the command prints one summary line (``import: 2 files in 0.0 s``) and no cursor code;
piped, neither; with ``-q``, neither.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.repo import posix_only
from test_terminal import HIDE_CURSOR, on_pty, piped

pytestmark = posix_only("pseudo-terminals are POSIX")
SOURCES = {"hi.prompt.md": "---\ndescription: Say hi\n---\nSay hi to ${input:name}\n",
           "bye.prompt.md": "---\ndescription: Say bye\n---\nSay bye\n"}


@pytest.fixture
def sources(tmp_path: Path) -> Path:
    for name, text in SOURCES.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


def _import(out: str) -> list[str]:
    return ["import", *SOURCES, "-o", out]


def test_import_draws_progress_on_a_terminal_only(sources: Path) -> None:
    drawn = on_pty(_import("tty"), sources)
    assert HIDE_CURSOR in drawn and b"\x1b[?25h" in drawn, drawn
    assert b"import: 2 files in" not in drawn  # a terminal gets the bar, not the line
    assert (sources / "tty" / "prompts" / "hi.prompt.yaml").is_file()
    log = on_pty(_import("ci"), sources, CI="true")
    assert HIDE_CURSOR not in log and b"\r" not in log.replace(b"\r\n", b"\n")
    assert b"import: 2 files in " in log
    quiet = on_pty(["-q", *_import("quiet")], sources, CI="true")
    assert HIDE_CURSOR not in quiet and b"files in" not in quiet
    plain = piped(_import("piped"), sources)
    assert plain.returncode == 0, plain.stderr
    assert b"\x1b[" not in plain.stderr + plain.stdout and b"files in" not in plain.stderr


def test_export_and_ls_draw_progress_on_a_terminal_only(sources: Path) -> None:
    assert piped(_import("pkg"), sources).returncode == 0
    export = ["export", "--to", "claude", "-p", "pkg", "-o"]
    assert HIDE_CURSOR in on_pty([*export, "tty"], sources)
    log = on_pty([*export, "ci"], sources, GITHUB_ACTIONS="true")
    assert HIDE_CURSOR not in log and b"export: 2 prompts in " in log
    assert (sources / "ci" / ".claude" / "commands" / "hi.md").is_file()
    assert HIDE_CURSOR in on_pty(["ls", "pkg"], sources)
    listed = on_pty(["ls", "pkg"], sources, CI="true")
    assert HIDE_CURSOR not in listed and b"hi" in listed
