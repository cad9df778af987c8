"""Fixtures for the serve tests: the kit package in a real git repo, its built bundle,
and raw clients that are always shut down."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import git
import pytest
from serve_helpers import RawClient, kit_files

from promptops.pipeline.build import Build
from promptops.pipeline.bundle import serialise


@pytest.fixture(autouse=True)
def _user_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Build caches must never land in the real ~/.cache of whoever runs the tests."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))


@pytest.fixture
def kit_repo(repo_factory: Callable[..., git.Repo]) -> Path:
    repo = repo_factory(kit_files())
    return Path(repo.working_tree_dir or ".")


@pytest.fixture
def kit_bundle(kit_repo: Path, tmp_path: Path) -> Path:
    path = tmp_path / "kit.bundle.json"
    path.write_bytes(serialise(Build(kit_repo, "HEAD").bundle))
    return path


@pytest.fixture
def raw(kit_bundle: Path) -> Iterator[Callable[..., RawClient]]:
    """``raw(revision, *args)`` -> a RawClient serving the kit bundle (plus ``args``)."""
    made: list[RawClient] = []

    def start(revision: str, *args: str) -> RawClient:
        client = RawClient(["--bundle", str(kit_bundle), *args], revision)
        made.append(client)
        return client

    yield start
    for c in made:
        if c.proc.poll() is None:
            c.proc.kill()
            c.proc.wait()
