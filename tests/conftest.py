"""Fixtures every test module may use; the plain helpers live in repo_helpers.py."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import git
import pytest
from repo_helpers import (  # noqa: F401  re-exported for modules that import conftest
    FIXTURES,
    PYTHON,
    REPO_ROOT,
    cli_env,
    commit_files,
    make_repo,
    write_files,
)


@pytest.fixture
def repo_factory(tmp_path: Path) -> Callable[..., git.Repo]:
    """``repo_factory(files, message=...)`` -> a fresh repository under tmp_path."""
    counter = iter(range(1_000_000))

    def factory(files: Mapping[str, str | bytes], message: str = "initial commit") -> git.Repo:
        return make_repo(tmp_path / f"repo{next(counter)}", files, message)

    return factory
