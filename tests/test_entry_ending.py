"""The command-line process leaves its objects out of the interpreter's last collection.

``promptops.__main__.main`` freezes the collector's objects when it ran the process's own
command line (the exit's full collection cost 0.25-0.35 s after a 5,000-prompt diff, on one
core, docs/benchmarks.md "diff on both cores to the end, session 13"); a caller passing
``argv`` (the tests' in-process runs) keeps its collector whole. Told apart here by an
object in a reference cycle with a finaliser: only a collection can free it once its
module lets go, so it is finalised at exit exactly when the collector still sees it.
"""

from __future__ import annotations

import subprocess

from helpers.repo import PYTHON, cli_env

SCRIPT = """
import os, sys
from promptops.__main__ import main

class Loud:
    def __del__(self):
        os.write(1, b"finalised\\n")

kept = Loud()
kept.me = kept
sys.argv = ["promptops", "--help"]
code = main(None if sys.argv[1:] and {own} else ["--help"])
os.write(1, f"code {{code}}\\n".encode())
"""


def _run(own_command_line: bool) -> list[str]:
    done = subprocess.run([PYTHON, "-c", SCRIPT.format(own=own_command_line)],
                          env=cli_env(), capture_output=True, text=True, check=False,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()[-2:]


def test_the_process_own_command_line_skips_the_last_collection() -> None:
    assert _run(True)[-1] == "code 0"  # nothing finalised after the command


def test_a_caller_with_argv_keeps_its_collector() -> None:
    assert _run(False) == ["code 0", "finalised"]
