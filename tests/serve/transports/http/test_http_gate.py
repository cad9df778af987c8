"""The team server applies the same lint gate as `promptops build` and stdio `serve`
(issue 15), from the command line and through the ASGI factory users deploy."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.repo import make_repo
from http_helpers import free_port

# Loads and compiles (build --no-lint takes it), but lint says PO201: an undeclared variable.
LINT_ERROR = {"promptops.yaml": "name: kit\nversion: 1.0.0\n",
              "prompts/hello.prompt.yaml": "description: d\nmessages:\n  - role: user\n"
                                           "    text: \"Hi {{ nobody }}\"\n"}


@pytest.mark.parametrize("how", ["cli", "factory"])
def test_a_head_lint_refuses_is_not_served(tmp_path: Path, how: str) -> None:
    root = tmp_path / "pkg"
    make_repo(root, LINT_ERROR)
    port = str(free_port())
    env = {**os.environ, "PROMPTOPS_SERVE_ARGS": str(root), "XDG_CACHE_HOME": str(tmp_path)}
    cmd = ([sys.executable, "-m", "promptops", "serve", "--http", f"127.0.0.1:{port}", str(root)]
           if how == "cli" else
           [sys.executable, "-m", "uvicorn", "--factory", "promptops.__main__:create_app",
            "--port", port])
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "lint fails" in done.stderr and "PO201" in done.stderr, done.stderr
