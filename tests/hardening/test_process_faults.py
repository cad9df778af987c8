"""Process faults: SIGTERM and SIGKILL while a command writes leave no partial file.

Real `promptops` subprocesses are killed at seeded random delays and, to hit the write
itself, at the first moment their output folder changes. After each kill the target is
byte-for-byte its old or its new content and no ``*.tmp`` file is left anywhere.

To add a command (``lint --fix``, ``test --update-snapshots``): write a ``prepare``
function returning a :class:`Job` and append a row to ``COMMANDS``.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from hardening_helpers import ABOUT, cli, record, repo_with
from repo_helpers import PYTHON, cli_env, commit_files

AREA = "process faults"
KILLS = 8  # per signal: half at random delays, half when the output folder first changes
PNG = b"\x89PNG\r\n\x1a\n"


@dataclass
class Job:
    cwd: Path
    argv: list[str]
    target: Path  # the file the command (re)writes
    old: bytes
    new: bytes
    watch: Path  # the folder whose first change means the write is under way
    roots: tuple[Path, ...]  # where no *.tmp may be left

    def reset(self) -> None:
        if self.target.exists():
            self.target.chmod(0o644)
        self.target.write_bytes(self.old)


def prepare_build(tmp: Path) -> Job:
    big = PNG + bytes(range(256)) * (6 * 1024 * 1024 // 256)  # a bundle of ~8 MB to write
    repo = repo_with(tmp / "pkg", {
        "prompts/big.prompt.yaml": "description: big\nmessages:\n  - role: user\n"
                                   "    image: {file: resources/big.png}\n",
        "resources/big.png": big})
    root = Path(repo.working_tree_dir or ".")
    dist = tmp / "dist"
    assert cli("build", "-o", str(dist), cwd=root).returncode == 0
    target = dist / "demo-1.0.0.bundle.json"
    old = target.read_bytes()
    commit_files(repo, {"prompts/about.prompt.yaml": ABOUT.replace("About", "Now about")}, "2")
    assert cli("build", "-o", str(tmp / "ref"), cwd=root).returncode == 0
    new = (tmp / "ref" / target.name).read_bytes()
    assert new != old
    return Job(root, ["build", "--force", "-o", str(dist)], target, old, new, dist, (root, dist))


def prepare_bump(tmp: Path) -> Job:
    repo = repo_with(tmp / "pkg")
    root = Path(repo.working_tree_dir or ".")
    target = root / "promptops.yaml"
    old = target.read_bytes()
    shutil.copytree(root, tmp / "ref")
    assert cli("bump", "patch", cwd=tmp / "ref").returncode == 0
    new = (tmp / "ref" / "promptops.yaml").read_bytes()
    assert new != old and b"1.0.1" in new
    return Job(root, ["bump", "patch"], target, old, new, root, (root,))


COMMANDS: list[tuple[str, Callable[[Path], Job]]] = [
    ("build", prepare_build),
    ("bump", prepare_bump),
    # ("lint --fix", prepare_lint_fix), ("test --update-snapshots", prepare_snapshots)
]


def listing(folder: Path) -> set[tuple[str, int]]:
    out = set()
    for entry in os.scandir(folder):
        try:
            out.add((entry.name, entry.stat(follow_symlinks=False).st_mtime_ns))
        except FileNotFoundError:
            continue
    return out


def kill_during(job: Job, sig: int, delay: float | None) -> str:
    """Run the job and send ``sig`` after ``delay`` s, or (None) at the first folder change."""
    before = listing(job.watch)
    proc = subprocess.Popen([PYTHON, "-m", "promptops", *job.argv], cwd=job.cwd, env=cli_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    start = time.monotonic()
    while proc.poll() is None and time.monotonic() - start < 60:
        if delay is not None and time.monotonic() - start >= delay:
            break
        if delay is None and listing(job.watch) != before:
            break
        time.sleep(0.0005 if delay is None else 0.002)
    if proc.poll() is None:
        proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert b"Traceback" not in err, err.decode()
    return "finished" if proc.returncode == 0 else "killed"


@pytest.mark.parametrize(("command", "prepare"), COMMANDS, ids=[c for c, _ in COMMANDS])
def test_kill_leaves_old_or_new_never_partial(tmp_path: Path, command: str,
                                             prepare: Callable[[Path], Job]) -> None:
    job = prepare(tmp_path)
    start = time.monotonic()
    job.reset()
    assert kill_during(job, signal.SIGTERM, 120.0) == "finished"
    assert job.target.read_bytes() == job.new
    full = time.monotonic() - start
    rng = random.Random(f"{command}-8")
    swept = 0
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for i in range(KILLS):
            job.reset()
            delay = None if i % 2 else rng.uniform(0.0, full * 1.1)
            kill_during(job, sig, delay)
            data = job.target.read_bytes()
            assert data in (job.old, job.new), f"{sig.name} left {len(data)} bytes"
            leftovers = [p for root in job.roots for p in root.rglob("*.tmp")]
            if sig == signal.SIGKILL and leftovers:  # killed between link and rename
                assert [p.read_bytes() for p in leftovers] == [job.new], leftovers
                swept += 1
                job.reset()
                assert kill_during(job, sig, 120.0) == "finished"  # the next write sweeps it
                leftovers = [p for root in job.roots for p in root.rglob("*.tmp")]
            assert leftovers == [], f"{sig.name} at {delay} left {leftovers}"
    record(AREA, f"SIGTERM and SIGKILL during `{command}` ({KILLS} kills each)", command,
           "the target is always the old or the new content, never partial; SIGTERM leaves "
           "no *.tmp file; SIGKILL at most a complete `.<name>.<pid>.tmp`, removed by the "
           "next write",
           f"test_process_faults.py::test_kill_leaves_old_or_new_never_partial[{command}]")
