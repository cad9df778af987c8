"""A script run in a fresh interpreter with the tests' folders on its path: for checks of
code that forks only when no other thread is alive (the build's and lint's halves), which a
test process with threads left by earlier tests would never reach."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def fresh_stdout(script: str, here: Path) -> list[str]:
    """The lines ``script`` prints, run with ``here`` (a test folder) and its parent
    importable; fails the test with the child's stderr when it does not exit 0."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(here), str(here.parent)])}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, check=False, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()
