"""A package absent at one end of a review is news (added or removed), told by its type.

``review/build.py`` used to recognise the absence by the words "does not exist at" in
the error's message; a reworded message would have turned every added package into a
failed review. Now ``GitSource`` raises :class:`PackageAbsent` (a ``GitError``, so the
CLI's exit code and message are unchanged) and the review catches that type.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.repo import make_repo

from promptops.errors import ExitCode, GitError, PackageAbsent
from promptops.pipeline.source import GitSource
from promptops.pipeline.templates import TemplateIndex
from promptops.review.build import _side

PACKAGE = {"pkg/promptops.yaml": "name: p\nversion: 1.0.0\n",
           "pkg/prompts/hello.prompt.yaml": "messages: [{role: user, text: hi}]\n"}


def test_a_folder_not_in_the_commit_is_package_absent(tmp_path: Path) -> None:
    make_repo(tmp_path, {"README.md": "x\n"})
    (tmp_path / "pkg").mkdir()
    with pytest.raises(PackageAbsent) as caught:
        GitSource(tmp_path / "pkg", "HEAD")
    assert isinstance(caught.value, GitError)
    assert caught.value.exit_code == ExitCode.USAGE  # as the GitError it was before
    assert str(caught.value).startswith("pkg does not exist at ")


def test_the_review_reads_an_absent_end_as_no_package(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"README.md": "x\n"})
    base = repo.head.commit.hexsha
    for rel, text in PACKAGE.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    repo.index.add(list(PACKAGE))
    repo.index.commit("add the package")
    assert _side(tmp_path / "pkg", base, TemplateIndex()) == (None, None, None, None)
    _source, _build, bundle, error = _side(tmp_path / "pkg", "HEAD", TemplateIndex())
    assert error is None and bundle is not None and bundle["package"]["name"] == "p"


def test_any_other_git_error_still_fails_the_review(tmp_path: Path) -> None:
    make_repo(tmp_path, PACKAGE)
    with pytest.raises(GitError) as caught:
        _side(tmp_path / "pkg", "no-such-ref", TemplateIndex())
    assert not isinstance(caught.value, PackageAbsent)
