"""Shared pieces of the hostile-content tests (invariants 1 and 2 of issue 12).

``cli`` runs a command in-process, as a user's shell would start it, and fails the test
on what must never happen whatever the package holds: an exception escaping the error
handler, exit 3 (a bug), a traceback. ``outside`` snapshots everything around a package
so a test can prove that nothing outside it was written, created or removed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import git
from helpers.repo import commit_files, run_cli

MANIFEST = "name: demo\nversion: 1.0.0\n"
PROMPT = ("description: d\narguments:\n  - {name: topic, required: true}\n"
          "messages:\n  - role: user\n    text: \"About {{ topic }}\"\n")
SECRET = "ghp_SECRETTOKENSECRETTOKENSECRETTOKEN0000"


@dataclass(frozen=True)
class Run:
    code: int
    out: str
    err: str


def cli(*args: str, at: Path, allowed: tuple[int, ...] = (0, 1, 2)) -> Run:
    """``promptops ARGS`` in-process from folder ``at``; never a crash, a bug or a traceback.

    ``helpers.repo.run_cli`` clears ``CI``, which (set on every CI runner) turns snapshot
    writing off; these tests are about writes. A bug is exit 3 with "internal error".
    """
    result = run_cli(*args, cwd=at)
    run = Run(result.returncode, result.stdout, result.stderr)
    assert run.code in allowed, (args, run)
    assert "Traceback" not in run.err and "internal error" not in run.err, run.err
    return run


def first_error(err: str) -> str:
    """The first line of a refusal that is not a note (build notes uncommitted changes)."""
    return next(ln for ln in err.splitlines() if ln.strip() and not ln.startswith("note:"))


def outside(around: Path, package: Path) -> dict[str, tuple[int, bytes | str]]:
    """Every entry below ``around`` except ``package`` itself: (mode, bytes or link target)."""
    found: dict[str, tuple[int, bytes | str]] = {}
    for dirpath, dirnames, filenames in os.walk(around):
        here = Path(dirpath)
        dirnames[:] = [d for d in dirnames if here / d != package]
        for name in dirnames + filenames:
            path = here / name
            st = path.lstat()
            if path.is_symlink():
                found[str(path)] = (st.st_mode, os.readlink(path))
            elif path.is_file():
                found[str(path)] = (st.st_mode, path.read_bytes())
            else:
                found[str(path)] = (st.st_mode, "dir")
    return found


def serves_the_next_good_commit(server: Any, repo: git.Repo, files: dict[str, str],
                                prompt: str, expected: str) -> None:
    """After a bad commit: a good one is served with one list_changed, then a clean exit."""
    commit_files(repo, files, "good again")
    server.wait_notification("notifications/prompts/list_changed")
    assert server.text(prompt, topic="x") == expected
    assert server.close() == 0
    assert "Traceback" not in "".join(server.stderr)
