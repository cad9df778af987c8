"""Fuzzing package content: hostile YAML, templates and symlinks through the CLI.

Each round writes a random hostile package (``fuzz_content.py``), commits it, and runs
`check`, `build`, `test` and `lint` in-process on the working tree and on the commit.
Whatever the package holds: every exit is 0, 1 or 2 (never 3, never a signal), there is
no traceback, the secret beside the package never appears in any output or any file the
commands write, and nothing outside the package is created, changed or removed.

A few seconds of the fuzz suite's budget: 4 s locally, 8 s in CI (``CI`` set),
``PROMPTOPS_FUZZ_CONTENT_SECONDS`` for a longer opt-in run; ``PROMPTOPS_FUZZ_SEED`` seeds it
(default 1, so CI meets the same packages each run).
"""

from __future__ import annotations

import contextlib
import os
import random
import sys
import time
from pathlib import Path

import git
from fuzz_content import SECRET, hostile_package, outside_world
from helpers.repo import make_repo

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "hardening"))
from content_helpers import cli, outside
from hardening_helpers import record

MIN_ROUNDS = 8


def budget() -> float:
    return float(os.environ.get("PROMPTOPS_FUZZ_CONTENT_SECONDS")
                 or ("8" if os.environ.get("CI") else "4"))


def written(root: Path) -> dict[str, bytes]:
    """Every regular file in the package except git's own (what the commands may write)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in filenames:
            path = Path(dirpath) / name
            if path.is_file() and not path.is_symlink():  # not a FIFO: its open would block
                out[str(path)] = path.read_bytes()
    return out


def one_round(rng: random.Random, area: Path) -> tuple[list[str], dict[int, int]]:
    secret = outside_world(area)
    pkg = hostile_package(rng, secret)
    root = area / "pkg"
    repo = make_repo(root, {"promptops.yaml": "name: placeholder\nversion: 0.0.1\n"})
    with repo.config_writer() as cfg:  # as actions/checkout leaves it
        cfg.set_value('http "https://github.com/"', "extraheader", f"AUTHORIZATION: {SECRET}")
    (root / "promptops.yaml").unlink()
    pkg.write(root)
    try:
        repo.git.add("--all")
    except git.GitCommandError:  # git refuses to track `.GIT/...` (the worktree has it)
        repo.git.add("--all", "--", ".", ":(exclude).GIT")
    with contextlib.suppress(git.GitCommandError):  # nothing git tracks changed: the
        repo.git.commit("-q", "-m", "hostile")  # working tree still holds the feature
    before = outside(area, root)
    codes: dict[int, int] = {}
    for args in (["check", str(root)], ["check", str(root), "--ref", "HEAD"],
                 ["lint", str(root)], ["lint", str(root), "--ref", "HEAD"],
                 ["test", str(root)], ["test", str(root), "--ref", "HEAD"],
                 ["build", "--no-lint", "-o", "dist"], ["build", "--no-lint", "--worktree",
                                                         "-o", "dist", "--force"]):
        run = cli(*args, at=root)  # exit 0/1/2, no exception, no traceback
        assert SECRET not in run.out + run.err, (pkg.features, args, run)
        codes[run.code] = codes.get(run.code, 0) + 1
    assert outside(area, root) == before, pkg.features
    leaked = [p for p, data in written(root).items() if SECRET.encode() in data
              and not p.endswith(".GIT/config")]  # the package's own hostile file
    assert not leaked, (pkg.features, leaked)
    return pkg.features, codes


def test_hostile_content_never_crashes_and_touches_nothing_outside(tmp_path: Path) -> None:
    rng = random.Random(os.environ.get("PROMPTOPS_FUZZ_SEED", "1"))
    deadline = time.monotonic() + budget()
    rounds, seen, codes = 0, [], {0: 0, 1: 0, 2: 0}
    while rounds < MIN_ROUNDS or time.monotonic() < deadline:
        features, got = one_round(rng, tmp_path / f"r{rounds}")
        seen += features
        for code, n in got.items():
            codes[code] += n
        rounds += 1
    assert codes[1] > 0, seen  # hostile packages were refused, not silently accepted
    kinds = {f.split(":")[0].split(" (")[0] for f in seen}
    assert len(kinds) >= 3, kinds
    record("hostile content", "random hostile packages: YAML nested up to 50,000 deep (flow, "
           "block, through alias chains), alias bombs, recursive anchors, integers past 4,300 "
           "digits, templates nested up to 20,000 deep, symlinks out of the package, into "
           ".git, loops, non-UTF-8 targets, symlinked snapshot/output/partials folders, in "
           "prompts, manifests and test files", "check, lint, test, build (worktree and "
           "--ref HEAD)",
           "every exit 0, 1 or 2, no traceback, the secret never printed or written, nothing "
           "outside the package created, changed or removed",
           "test_fuzz_content.py::test_hostile_content_never_crashes_and_touches_nothing_outside")
