"""Fixtures every test module may use; the plain helpers live in repo_helpers.py."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

import git
import pytest
from hypothesis import settings
from repo_helpers import make_repo

# CI must not be a lottery: property tests draw the same examples on every CI run
# (derandomize). Locally they explore new ones each run, which is how bugs get found.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture
def repo_factory(tmp_path: Path) -> Callable[..., git.Repo]:
    """``repo_factory(files, message=...)`` -> a fresh repository under tmp_path."""
    counter = iter(range(1_000_000))

    def factory(files: Mapping[str, str | bytes], message: str = "initial commit") -> git.Repo:
        return make_repo(tmp_path / f"repo{next(counter)}", files, message)

    return factory
