"""benchmarks/stdio_instructions.py keeps running the stdio loop it counts (no valgrind here).

It drives ``transports.stdio._Loop.run`` on a file of pipelined gets; a get that fails
(an error reply) would make its instruction count meaningless, so it reports them: none
for gets the bundle answers, one per get for gets it refuses.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from helpers.repo import PYTHON, REPO_ROOT


def run(bundle: Path, arguments: dict[str, str], *extra: str) -> subprocess.CompletedProcess[str]:
    """Five gets of the kit's ``code_review`` (its second prompt) after a first one."""
    return subprocess.run([PYTHON, str(REPO_ROOT / "benchmarks" / "stdio_instructions.py"), "5",
                           str(bundle), "--cycle", "1", "--skip", "1", "--arguments",
                           json.dumps(arguments), *extra],
                          capture_output=True, text=True, timeout=120, check=False)


def test_the_script_answers_every_get_and_reports_refused_ones(kit_bundle: Path) -> None:
    assert json.loads(kit_bundle.read_text())["prompts"][1]["name"] == "code_review"
    good = {"code": "print(1)", "language": "python"}
    done = run(kit_bundle, good)
    assert done.returncode == 0 and "error replies: 0" in done.stderr, done.stderr
    assert run(kit_bundle, good, "--core").returncode == 0
    refused = run(kit_bundle, {**good, "no-such-argument": "x"})
    assert refused.returncode == 0 and "error replies: 6" in refused.stderr, refused.stderr
