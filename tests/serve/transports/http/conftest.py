"""Fixtures for the HTTP transport tests: a package in a real git repository."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[2]))  # serve_helpers: the kit package

from helpers.repo import make_repo
from serve_helpers import kit_files


@pytest.fixture(autouse=True)
def _user_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Build caches must never land in the real ~/.cache of whoever runs the tests."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))


@pytest.fixture(scope="module")
def kit_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("kit") / "kit"
    make_repo(root, kit_files())
    return root


@pytest.fixture(scope="module")
def module_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of module-scoped servers: their own build cache."""
    return {"XDG_CACHE_HOME": str(tmp_path_factory.mktemp("cache"))}
