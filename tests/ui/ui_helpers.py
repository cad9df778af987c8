"""The package the UI tests browse: the starter package plus a hostile prompt and a typed one,
in a real git repository with two commits (so there is something to compare)."""

from __future__ import annotations

import hashlib
import socket
import subprocess
import sys
import time
from pathlib import Path

import git
import httpx2
from helpers.repo import REPO_ROOT, cli_env, commit_files, make_repo

STARTER = REPO_ROOT / "templates"

HOSTILE = """\
title: "<script>alert('title')</script>Hostile"
description: "<img src=x onerror=alert('description')> <a href=\\"javascript:alert(1)\\">x</a>"
arguments:
  - name: payload
    description: "<svg onload=alert('argument')>"
    required: true
metadata:
  tags: ["<b>tag</b>", security]
messages:
  - role: system
    text: "<script>alert('system')</script>"
  - role: user
    text: "<a href=\\"javascript:alert('link')\\">click</a>\\
      <img src=x onerror=alert('img')> {{ payload }}"
"""

TYPED = """\
title: Typed arguments
description: Every kind of form field
arguments:
  - name: count
    type: integer
    required: true
  - name: ratio
    type: number
  - name: loud
    type: boolean
  - name: items
    type: array
  - name: options
    type: object
  - name: code
    pattern: "[A-Z]{3}-[0-9]+"
    required: true
samples:
  - name: basic
    arguments: {count: 3, code: ABC-1, items: [a, b], loud: true}
messages:
  - role: user
    text: "{{ count }} x {{ code }} ratio={{ ratio }} loud={{ loud }} items={{ items }} \\
      options={{ options }}"
"""


def starter_files() -> dict[str, str | bytes]:
    files: dict[str, str | bytes] = {}
    for path in STARTER.rglob("*"):
        if path.is_file() and "__pycache__" not in path.parts:
            files[path.relative_to(STARTER).as_posix()] = path.read_bytes()
    files["prompts/hostile.prompt.yaml"] = HOSTILE
    files["prompts/typed.prompt.yaml"] = TYPED
    return files


def make_package(root: Path) -> git.Repo:
    """The package at ``root`` (a git repository); HEAD~1, tagged as the release
    starter-prompts@0.1.0, has the first wording of commit_message's system message, HEAD
    the second."""
    repo = make_repo(root, starter_files(), "the starter package")
    repo.create_tag("starter-prompts@0.1.0", message="release 0.1.0")
    source = (root / "prompts" / "commit_message.prompt.yaml").read_text(encoding="utf-8")
    changed = source.replace("in the Conventional Commits style.",
                             "in the Conventional Commits style, in English.")
    assert changed != source
    commit_files(repo, {"prompts/commit_message.prompt.yaml": changed}, "reword the system message")
    return repo


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Serve:
    """`serve --http --ui` over the UI test package with two teams' tokens, until stop()."""

    def __init__(self, tmp_path: Path) -> None:
        pkg = tmp_path / "pkg"
        make_package(pkg)
        tokens = tmp_path / "tokens.toml"
        digest = {t: hashlib.sha256(t.encode()).hexdigest() for t in ("token-a", "token-b")}
        tokens.write_text(
            f'[[tokens]]\nname = "team-a"\nsha256 = "{digest["token-a"]}"\n'
            'see = ["starter-prompts/commit_*"]\n\n'
            f'[[tokens]]\nname = "team-b"\nsha256 = "{digest["token-b"]}"\n'
            'see = ["starter-prompts/code_*"]\n')
        self.port = _free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log_path = tmp_path / "serve.log"
        self.log = self.log_path.open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "promptops", "serve", "--http", f"127.0.0.1:{self.port}",
             str(pkg), "--tokens", str(tokens), "--ui", "--shutdown-timeout", "2s"],
            stdout=subprocess.DEVNULL, stderr=self.log, env=cli_env())
        deadline = time.monotonic() + 60
        while True:
            assert self.proc.poll() is None, self.log_path.read_text()
            try:
                if httpx2.get(self.base + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx2.HTTPError:
                pass
            assert time.monotonic() < deadline, "serve --http did not start"
            time.sleep(0.1)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
