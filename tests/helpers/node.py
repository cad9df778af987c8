"""Pinned npm packages for tests, installed once into the user's test cache.

Every test that needs a Node package (the TypeScript MCP SDK) shares one npm prefix, so
a package is downloaded once per machine, and `.ci/run` can install them all up front
into the same place. A file lock serialises installs,
because two pytest runs on one machine (a CI run next to a developer's) share the cache
and concurrent `npm install`s into one prefix can leave it half-written.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

NODE_DEPS = Path.home() / ".cache" / "promptops-tests" / "node"


def _installed(where: Path, version: str) -> bool:
    try:
        meta = json.loads((where / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return bool(meta.get("version") == version)


@contextmanager
def _locked(lock: IO[str]) -> Iterator[None]:
    """An exclusive lock on an open file, held for the block (flock, or msvcrt on Windows)."""
    if sys.platform == "win32":
        import msvcrt

        lock.seek(0)  # msvcrt locks bytes from the current position: always byte 0
        msvcrt.locking(lock.fileno(), msvcrt.LK_LOCK, 1)  # retries for up to 10 s
        try:
            yield
        finally:
            lock.seek(0)
            msvcrt.locking(lock.fileno(), msvcrt.LK_UNLCK, 1)
    else:
        import fcntl

        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def npm_package(name: str, version: str) -> Path:
    """The folder of ``name@version`` under NODE_DEPS, installed with npm if missing."""
    where = NODE_DEPS / "node_modules" / name
    if _installed(where, version):
        return where
    NODE_DEPS.mkdir(parents=True, exist_ok=True)
    npm = shutil.which("npm")  # npm.cmd on Windows, which subprocess cannot find by name
    assert npm, "npm is needed to install the Node packages the tests use"
    with (NODE_DEPS / ".install.lock").open("a+") as lock, _locked(lock):
        if not _installed(where, version):
            subprocess.run([npm, "install", "--no-audit", "--no-fund", "--prefix",
                            str(NODE_DEPS), f"{name}@{version}"],
                           check=True, capture_output=True, timeout=300)
    assert _installed(where, version), f"npm did not install {name}@{version} into {NODE_DEPS}"
    return where
