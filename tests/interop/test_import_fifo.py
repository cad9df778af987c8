"""`promptops import` never hangs on a FIFO (issue 23, defect 2): a real process, bounded.

Before, the import opened a FIFO found among the sources for a blocking read and waited
for a writer forever; the process is run with a timeout, so that shows as a failure, not
a hung suite. Now it is refused with exit 2 before anything is read.
"""

from __future__ import annotations

import os
from pathlib import Path

from helpers.repo import posix_only, run_cli_process

pytestmark = posix_only("FIFOs")


def test_a_fifo_in_the_source_is_refused_at_once(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "ok.prompt.md").write_text("Explain ${input:topic}\n", encoding="utf-8")
    os.mkfifo(src / "pipe.md")
    done = run_cli_process("import", str(src), "-o", str(tmp_path / "pkg"), timeout=60)
    assert done.returncode == 2, done.stderr
    assert "pipe.md: a FIFO" in done.stderr
    assert not (tmp_path / "pkg").exists()
    named = run_cli_process("import", str(src / "pipe.md"), "-o", str(tmp_path / "pkg"),
                            timeout=60)
    assert named.returncode == 2, named.stderr
