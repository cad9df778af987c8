"""promptops's read-only git commands never take ``.git/index.lock``.

``serve`` runs ``git status`` in the background while the user commits in the same
repository; a ``git status`` that refreshes the index holds ``index.lock`` for that moment
and the user's ``git commit`` fails with "index.lock: File exists" (seen in CI: a test's
own commit collided with serve's start-up notice). A stat-stale index is what makes git
want to rewrite it, so each test makes the index stale and checks it was not written.

``git diff REV`` against the working tree refreshes the index even with
``GIT_OPTIONAL_LOCKS=0`` (git 2.39); only foreground commands the user runs (lint's
changed-files list) use it, never serve.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from helpers.repo import make_repo, write_files

from promptops.git.history import History
from promptops.serve.watch import dirty_notice


def stale_repo(root: Path) -> Path:
    """A repository whose index holds stat data older than the tracked file's."""
    make_repo(root, {"promptops.yaml": "name: p\nversion: 0.1.0\n", "prompts/a.txt": "a\n"})
    index = root / ".git" / "index"
    old = time.time() - 100
    os.utime(index, (old, old))
    later = time.time() + 5  # same content, newer mtime: stat data no longer matches
    os.utime(root / "prompts" / "a.txt", (later, later))
    return index


def test_the_serve_notice_does_not_rewrite_the_index(tmp_path: Path) -> None:
    root = tmp_path / "pkg"
    index = stale_repo(root)
    before = index.stat().st_mtime_ns
    write_files(root, {"prompts/new.txt": "x\n"})
    said: list[str] = []
    dirty_notice([root], said.append).join(timeout=30)
    assert said and "1 uncommitted change" in said[0], said  # it did run git status
    assert index.stat().st_mtime_ns == before


def test_history_reads_do_not_rewrite_the_index(tmp_path: Path) -> None:
    root = tmp_path / "pkg"
    index = stale_repo(root)
    before = index.stat().st_mtime_ns
    history = History.open(root, "the test")
    assert history.status("prompts") == []
    assert not history.is_dirty("prompts")
    assert index.stat().st_mtime_ns == before
