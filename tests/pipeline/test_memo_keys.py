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


def test_validation_keeps_the_working_tree_ids_it_hashes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Validation keys its memo on the id it hashes and the source keeps it: a second
    validation of the same source (the build after review/warm.py's prevalidation), lint's
    cache key and the diff's same-bytes check hash no prompt file again (issue 26 session 21:
    each hashed every file of a large `diff` once more)."""
    from promptops.pipeline.validate import validate_some

    files = {"promptops.yaml": "name: m\nversion: 1.0.0\n"}
    files.update({f"prompts/p{n}.prompt.yaml": PROMPT.format(n=n) for n in range(5)})
    make_repo(tmp_path / "r", files)
    hashed = counted_hashes(monkeypatch)
    build = Build(tmp_path / "r", None, memo=FileMemo())
    prompts = [p for p in build.source.files() if p.startswith("prompts/")]
    validate_some(build.source, prompts, [], memo=build.memo, index=build.index)
    assert sorted(hashed) == sorted(PROMPT.format(n=n).encode() for n in range(5))
    assert build.package is not None  # the build's validation finds every id kept
    for path in prompts:
        assert build.source.content_id(path) == blob_id((tmp_path / "r" / path).read_bytes())
        assert build.source.blob_id(path) == build.source.content_id(path)
    assert len(hashed) == 5



def test_a_commits_blob_ids_look_for_symlinks_only_in_a_tree_holding_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A tree without a symlink has no path through one: its blob ids are read off the
    listing; once a commit holds a link, a path through it has none, as before."""
    import os

    from promptops.pipeline import source as source_mod

    files = {"promptops.yaml": "name: m\nversion: 1.0.0\n",
             "prompts/p1.prompt.yaml": PROMPT.format(n=1)}
    repo = make_repo(tmp_path / "r", files)
    looked: list[str] = []
    real = source_mod._first_link
    monkeypatch.setattr(source_mod, "_first_link", lambda p, e: looked.append(p) or real(p, e))
    plain = source_mod.GitSource(tmp_path / "r", "HEAD")
    assert plain.blob_id("prompts/p1.prompt.yaml") == blob_id(PROMPT.format(n=1).encode())
    assert looked == [] and plain.blob_ids() is not None
    os.symlink("prompts", tmp_path / "r" / "linked")
    repo.git.add("linked")
    repo.git.commit("-qm", "a link")
    linked = source_mod.GitSource(tmp_path / "r", "HEAD")
    assert linked.blob_id("linked") is None and linked.blob_ids() is None  # the link's text
    assert linked.blob_id("prompts/p1.prompt.yaml") == plain.blob_id("prompts/p1.prompt.yaml")
    assert looked == ["linked", "prompts/p1.prompt.yaml"]
