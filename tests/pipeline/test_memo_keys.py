"""A prompt file has one memo key wherever it is read from: its git blob id.

From a commit the id is known before reading; from the working tree it is computed from the
bytes. So a review of uncommitted edits against HEAD parses each unchanged prompt file once,
and an edited one is parsed again.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.hashing import counted_hashes
from helpers.repo import make_repo

from promptops.git.objects import blob_id
from promptops.pipeline.build import Build
from promptops.pipeline.memo import FileMemo

PROMPT = "messages:\n  - role: user\n    text: 'hello {n}'\n"


def test_the_working_tree_and_a_commit_share_memo_entries(tmp_path: Path) -> None:
    files = {"promptops.yaml": "name: m\nversion: 1.0.0\n"}
    files.update({f"prompts/p{n}.prompt.yaml": PROMPT.format(n=n) for n in range(5)})
    make_repo(tmp_path / "r", files)
    (tmp_path / "r" / "prompts" / "p0.prompt.yaml").write_text(PROMPT.format(n="edited"))
    memo = FileMemo()
    committed = Build(tmp_path / "r", "HEAD", memo=memo).bundle
    keys = set(memo._prompts)
    assert ("prompt", "prompts/p1.prompt.yaml", blob_id(PROMPT.format(n=1).encode())) in keys
    worktree = Build(tmp_path / "r", None, memo=memo).bundle
    added = set(memo._prompts) - keys
    assert added == {("prompt", "prompts/p0.prompt.yaml",
                      blob_id(PROMPT.format(n="edited").encode()))}  # only the edited file
    assert [p["name"] for p in worktree["prompts"]] == [p["name"] for p in committed["prompts"]]
    assert worktree["prompts"][0]["messages"][0]["text"] == "hello edited"


def test_a_cold_lint_of_the_working_tree_hashes_each_file_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cache key hashes each file; validation then keys its memo on the id kept by the
    source (``CachingSource.content_id``), the same value, not on a hash of its own
    (issue 26 session 15: three SHA-1 passes over every file where no text repeats)."""
    from promptops.lint.runner import lint_package

    files = {"promptops.yaml": "name: m\nversion: 1.0.0\n"}
    files.update({f"prompts/p{n}.prompt.yaml": PROMPT.format(n=n) for n in range(5)})
    make_repo(tmp_path / "r", files)
    hashed = counted_hashes(monkeypatch)
    memo = FileMemo()
    build = Build(tmp_path / "r", None, memo=memo)
    linted = lint_package(build)
    assert linted.how == "full" and linted.package is not None
    assert sorted(hashed) == sorted(p.read_bytes() for p in (tmp_path / "r").rglob("*")
                                    if p.is_file() and ".git" not in p.parts)
    assert ("prompt", "prompts/p1.prompt.yaml", blob_id(PROMPT.format(n=1).encode())) in set(
        memo._prompts)
