"""A commit's files are named by the tree's blob ids, never by a symlink's own id.

Lint's cache key (and serve's gate, which looks every new commit up in it) takes each
file's id from the tree instead of reading and hashing 1,000 blobs; the per-file memo a
following server keeps across rebuilds keys prompt files the same way. A symlink's tree
entry names the link's text, not the bytes read through it, so through a symlink the id
is unknown and the bytes decide: otherwise a server following HEAD would keep serving a
symlinked prompt's old text after its target changed.
"""

from __future__ import annotations

import os
from pathlib import Path

import git
import pytest
from helpers.repo import SYMLINKS, commit_files, make_repo, posix_only

from promptops.lint import cache
from promptops.lint.runner import Options, lint_package
from promptops.pipeline.build import Build
from promptops.pipeline.memo import FileMemo
from promptops.pipeline.source import CachingSource, GitSource, blob_id

PROMPT = "description: {0}\nmessages:\n- role: user\n  text: {0}\n"


@pytest.fixture
def linked(tmp_path: Path) -> tuple[Path, git.Repo]:
    """A package whose prompt file and partial are symlinks to files inside it."""
    pkg = tmp_path / "pkg"
    repo = make_repo(pkg, {"promptops.yaml": "name: s\nversion: 1.0.0\n",
                           "common/a.yaml": PROMPT.format("one"),
                           "common/part.j2": "Part one.\n",
                           "prompts/b.prompt.yaml": 'description: b\nmessages:\n- role: user\n'
                                                    '  text: \'{% include "partials/p.j2" %}\'\n'})
    (pkg / "prompts" / "a.prompt.yaml").symlink_to("../common/a.yaml")
    (pkg / "partials").mkdir()
    (pkg / "partials" / "p.j2").symlink_to("../common/part.j2")
    commit_files(repo, {})
    return pkg, repo


@posix_only(SYMLINKS)
def test_lint_keys_a_commit_on_the_ids_of_the_bytes_it_reads(
        linked: tuple[Path, git.Repo]) -> None:
    pkg, _ = linked
    source = CachingSource(GitSource(pkg, "HEAD"))
    ids = cache.blobs(source, pkg / ".git" / "promptops" / "lint")
    assert ids == {p: blob_id(source.read(p)) for p in source.files()}
    assert os.path.islink(pkg / "prompts" / "a.prompt.yaml")


@posix_only(SYMLINKS)
def test_a_followed_symlinked_prompt_serves_its_target_s_new_text(
        linked: tuple[Path, git.Repo]) -> None:
    """Two builds sharing one memo, as serve's follower rebuilds commit after commit."""
    pkg, repo = linked
    memo = FileMemo()
    first = Build(pkg, repo.head.commit.hexsha, memo=memo).bundle
    second = commit_files(repo, {"common/a.yaml": PROMPT.format("two")})
    again = Build(pkg, second, memo=memo).bundle
    assert [p.get("description") for p in first["prompts"]] == ["one", "b"]
    assert [p.get("description") for p in again["prompts"]] == ["two", "b"]
    assert again["digest"] == Build(pkg, second).bundle["digest"]


@posix_only(SYMLINKS)
def test_a_changed_symlink_target_relints_as_a_full_run(
        linked: tuple[Path, git.Repo]) -> None:
    pkg, repo = linked

    def lint(ref: str, use_cache: bool) -> list[str]:
        found = lint_package(Build(pkg, ref, keep_asts=True), Options(use_cache=use_cache))
        return [f"{f.path}:{f.line}:{f.code}:{f.message}" for f in found.findings]

    lint(repo.head.commit.hexsha, True)
    ref = commit_files(repo, {"common/a.yaml": PROMPT.format("two {{ nope }}"),
                              "common/part.j2": "Part {{ missing }}.  \n"})
    found = lint(ref, True)
    assert found == lint(ref, False)
    assert any("'nope'" in line for line in found) and any("'missing'" in line
                                                            for line in found)
