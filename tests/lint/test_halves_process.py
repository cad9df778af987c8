"""Cold lint on both cores finds what one core finds, checked in a fresh process.

``promptops.lint.halves`` forks only when no other thread is alive, and a test run may
have threads left by earlier tests: here a fresh interpreter, which has none, compares the
two outcomes (``test_halves.one_and_both``; on one core it checks that lint stays in one
process).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = """
import test_halves
pairs = test_halves.one_and_both()
print("same" if all(one == both for one, both in pairs) else "different")
print([len(one) for one, _ in pairs])
"""


def test_both_halves_find_what_one_process_finds_in_a_fresh_process() -> None:
    here = Path(__file__).parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(here), str(here.parent)])}
    done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True,
                          text=True, check=False, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "same", done.stdout
