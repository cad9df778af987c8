"""`promptops diff` shows a spinner on a terminal while it renders, nothing in a CI log.

Through a real pseudo-terminal (tests/test_terminal.py's helper): rich hides the cursor
while it draws; with CI set, or piped, no cursor code reaches the output, and the report
itself is the same bytes either way.
"""

from __future__ import annotations

from pathlib import Path

from helpers.repo import posix_only
from review_helpers import fixed_commit, fixed_repo
from test_terminal import HIDE_CURSOR, on_pty, piped

pytestmark = posix_only("pseudo-terminals are POSIX")
PROMPT = "arguments:\n  - name: who\nmessages:\n  - role: user\n    text: 'Hi {{ who }}'\n"


def test_diff_draws_a_spinner_on_a_terminal_only(tmp_path: Path) -> None:
    root = tmp_path / "r"
    repo = fixed_repo(root, {"promptops.yaml": "name: p\nversion: 1.0.0\n",
                             "prompts/p.prompt.yaml": PROMPT})
    fixed_commit(repo, {"prompts/p.prompt.yaml": PROMPT.replace("Hi", "Hello")}, "edit", 1)
    args = ["diff", "HEAD~1", "HEAD", "--format", "markdown", "-o"]
    drawn = on_pty([*args, "tty.md"], root)
    assert HIDE_CURSOR in drawn and b"\x1b[?25h" in drawn
    log = on_pty([*args, "ci.md"], root, CI="true")
    assert HIDE_CURSOR not in log and b"\r" not in log.replace(b"\r\n", b"\n")
    assert piped([*args, "piped.md"], root).returncode == 0
    report = (root / "tty.md").read_text()
    assert "+Hello" in report
    assert report == (root / "ci.md").read_text() == (root / "piped.md").read_text()
