"""Process faults: SIGTERM and SIGKILL while a command writes leave no partial file.

Real `promptops` subprocesses are killed at seeded random delays inside the write window
(from just before their output folder first changed in a full run to just after that run
ended) and, to hit the first write itself, at the first moment the folder changes. After
each kill every target is byte-for-byte its old or its new content (a removed file:
present or gone) and no ``*.tmp`` file is left anywhere. A command that writes several
files may be stopped between two of them; each file on its own is never partial.

To add a command: write a ``prepare`` function returning a :class:`Job` and append a row
to ``COMMANDS``.
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
from hardening_helpers import ABOUT, record, repo_with
from helpers.repo import PYTHON, SIGNALS, cli_env, commit_files, posix_only
from helpers.repo import run_cli as cli  # the set-up runs in-process; the killed job does not

AREA = "process faults"
KILLS = 4  # per signal: half at random delays in the write window, half at its first change
PNG = b"\x89PNG\r\n\x1a\n"


@dataclass
class Job:
    cwd: Path
    argv: list[str]
    targets: dict[Path, tuple[bytes | None, bytes | None]]  # file -> (old, new); None: absent
    watch: Path  # the folder whose first change means the writes are under way
    roots: tuple[Path, ...]  # where no *.tmp may be left

    def reset(self) -> None:
        for target, (old, _) in self.targets.items():
            if target.exists():
                target.chmod(0o644)
                target.unlink()
            if old is not None:
                target.write_bytes(old)

    def state(self, target: Path) -> bytes | None:
        return target.read_bytes() if target.exists() else None

    def complete_temp(self, tmp: Path) -> bool:
        """A SIGKILL leftover: ``.<name>.<pid>.tmp`` beside a target, holding its new bytes."""
        return any(tmp.parent == t.parent and tmp.name.startswith(f".{t.name}.")
                   and new is not None and tmp.read_bytes() == new
                   for t, (_, new) in self.targets.items())


def snapshot(root: Path) -> dict[Path, bytes]:
    """Every file below ``root`` except git's own, for a before/after comparison."""
    return {p: p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".git" not in p.relative_to(root).parts}


def outcome(job: Job, ref: Path) -> dict[Path, tuple[bytes | None, bytes | None]]:
    """(old, new) of every file the command changes, from a finished run in a copy."""
    before = snapshot(job.cwd)
    after = snapshot(ref)
    paths = {p.relative_to(job.cwd) for p in before} | {p.relative_to(ref) for p in after}
    return {job.cwd / rel: (before.get(job.cwd / rel), after.get(ref / rel))
            for rel in sorted(paths) if before.get(job.cwd / rel) != after.get(ref / rel)}


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
    return Job(root, ["build", "--force", "-o", str(dist)], {target: (old, new)}, dist,
               (root, dist))


def prepare_bump(tmp: Path) -> Job:
    repo = repo_with(tmp / "pkg")
    root = Path(repo.working_tree_dir or ".")
    target = root / "promptops.yaml"
    old = target.read_bytes()
    shutil.copytree(root, tmp / "ref")
    assert cli("bump", "patch", cwd=tmp / "ref").returncode == 0
    new = (tmp / "ref" / "promptops.yaml").read_bytes()
    assert new != old and b"1.0.1" in new
    return Job(root, ["bump", "patch"], {target: (old, new)}, root, (root,))


LINT_FIXES: dict[str, bytes] = {  # one file per fix, each a few KB so a write takes time
    "prompts/crlf.prompt.yaml": ABOUT.replace("About", "Crlf").encode().replace(b"\n", b"\r\n"),
    # trailing spaces a prompt would send are never fixed without --unsafe-fixes (issue 15):
    # a resource no prompt embeds is a fix the proof allows
    "resources/spaces.md": b"Spaces   \nmore   \n",
    "prompts/nonl.prompt.yaml": ABOUT.replace("About", "Nonl").rstrip("\n").encode(),
    "prompts/order.prompt.yaml": (b"messages:\n  - role: user\n    text: \"Order {{ topic }}\"\n"
                                  b"# keep this comment\narguments:\n  - {name: topic, "
                                  b"required: true}\ndescription: Key order\n"),
}


def prepare_lint_fix(tmp: Path) -> Job:
    filler = "".join(f"# note {i}: {'x' * 60}   \n" for i in range(60))  # trailing spaces too
    files = {path: data + filler.encode() for path, data in LINT_FIXES.items()}
    files["prompts/nonl.prompt.yaml"] = filler.encode() + LINT_FIXES["prompts/nonl.prompt.yaml"]
    repo = repo_with(tmp / "pkg", dict(files))
    root = Path(repo.working_tree_dir or ".")
    shutil.copytree(root, tmp / "ref")
    argv = ["lint", "--fix", "--no-cache"]  # the cache in .git/ is not what is tested here
    assert cli(*argv, cwd=tmp / "ref").returncode == 0
    job = Job(root, argv, {}, root / "prompts", (root,))
    job.targets = outcome(job, tmp / "ref")
    assert sorted(p.relative_to(root).as_posix() for p in job.targets) == sorted(LINT_FIXES)
    return job


SNAPSHOT_TESTS = "prompt: about\ncases:\n" + "".join(
    f"  - name: case {i}\n    arguments: {{topic: topic {i}}}\n    expect: {{snapshot: true}}\n"
    for i in range(4))


def prepare_snapshots(tmp: Path) -> Job:
    snaps = "tests/__snapshots__/about"
    repo = repo_with(tmp / "pkg", {"tests/about.test.yaml": SNAPSHOT_TESTS})
    root = Path(repo.working_tree_dir or ".")
    assert cli("test", cwd=root).returncode == 0  # writes the four new snapshots
    commit_files(repo, {"prompts/about.prompt.yaml": ABOUT.replace("About", "Now about"),
                        f"{snaps}/gone_case.json": "{}\n"}, "changed prompt, an obsolete case")
    (root / snaps / "case_2.json").unlink()  # and one snapshot never written
    (root / snaps / "case_3.json").unlink()
    shutil.copytree(root, tmp / "ref")
    argv = ["test", "--update-snapshots"]
    assert cli(*argv, cwd=tmp / "ref").returncode == 0
    job = Job(root, argv, {}, root / snaps, (root,))
    job.targets = outcome(job, tmp / "ref")
    kinds = sorted((old is None, new is None) for old, new in job.targets.values())
    assert kinds == [(False, False)] * 2 + [(False, True)] + [(True, False)] * 2, kinds
    return job


COMMANDS: list[tuple[str, Callable[[Path], Job]]] = [
    ("build", prepare_build),
    ("bump", prepare_bump),
    ("lint --fix", prepare_lint_fix),
    ("test --update-snapshots", prepare_snapshots),
]


def listing(folder: Path) -> set[tuple[str, int]]:
    out = set()
    for entry in os.scandir(folder):
        try:
            out.add((entry.name, entry.stat(follow_symlinks=False).st_mtime_ns))
        except FileNotFoundError:
            continue
    return out


def kill_during(job: Job, sig: int, delay: float | None,
                changed: list[float] | None = None) -> str:
    """Run the job and send ``sig`` after ``delay`` s, or (None) at the first folder change.

    ``changed`` (a run left to finish) receives the seconds from the start to the first
    change of the watched folder: when the writes begin.
    """
    before = listing(job.watch)
    proc = subprocess.Popen([PYTHON, "-m", "promptops", *job.argv], cwd=job.cwd, env=cli_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    start = time.monotonic()
    while proc.poll() is None and time.monotonic() - start < 60:
        if delay is not None and time.monotonic() - start >= delay:
            break
        if (delay is None or changed is not None) and listing(job.watch) != before:
            if changed is not None:
                changed.append(time.monotonic() - start)
                changed = None  # the first change only; the run goes on to its end
                continue
            break
        time.sleep(0.0005 if delay is None or changed is not None else 0.002)
    if proc.poll() is None:
        proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert b"Traceback" not in err, err.decode()
    return "finished" if proc.returncode == 0 else "killed"


@posix_only(SIGNALS)
@pytest.mark.parametrize(("command", "prepare"), COMMANDS, ids=[c for c, _ in COMMANDS])
def test_kill_leaves_old_or_new_never_partial(tmp_path: Path, command: str,
                                             prepare: Callable[[Path], Job]) -> None:
    job = prepare(tmp_path)
    start = time.monotonic()
    job.reset()
    changed: list[float] = []
    assert kill_during(job, signal.SIGTERM, 120.0, changed) == "finished"
    assert {t: job.state(t) for t in job.targets} == {t: n for t, (_, n) in job.targets.items()}
    full = time.monotonic() - start
    # The random delays fall from a little before the writes began to a little after the
    # run ended: a kill during the interpreter's start-up, long before any write, cannot
    # leave a partial file (it tested nothing, and was most of the random kills).
    writes = changed[0] if changed else 0.0
    rng = random.Random(f"{command}-{KILLS}")
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for i in range(KILLS):
            job.reset()
            delay = None if i % 2 else rng.uniform(writes * 0.9, full * 1.1)
            kill_during(job, sig, delay)
            for target, (old, new) in job.targets.items():
                data = job.state(target)
                assert data in (old, new), f"{sig.name} left {target.name} with " \
                                           f"{None if data is None else len(data)} bytes"
            leftovers = [p for root in job.roots for p in root.rglob("*.tmp")]
            if sig == signal.SIGKILL and leftovers:  # killed between link and rename
                assert all(job.complete_temp(p) for p in leftovers), leftovers
                job.reset()
                assert kill_during(job, sig, 120.0) == "finished"  # the next write sweeps it
                leftovers = [p for root in job.roots for p in root.rglob("*.tmp")]
            assert leftovers == [], f"{sig.name} at {delay} left {leftovers}"
    what = "the target is" if len(job.targets) == 1 else \
        f"each of the {len(job.targets)} files it changes is"
    record(AREA, f"SIGTERM and SIGKILL during `{command}` ({KILLS} kills each)", command,
           f"{what} always the old or the new content"
           + (" (a removed file: present or gone)" if any(
               n is None for _, n in job.targets.values()) else "")
           + ", never partial; SIGTERM leaves "
           "no *.tmp file; SIGKILL at most a complete `.<name>.<pid>.tmp`, removed by the "
           "next write",
           f"test_process_faults.py::test_kill_leaves_old_or_new_never_partial[{command}]")
