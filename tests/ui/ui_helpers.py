"""The package the UI tests browse: the starter package plus a hostile prompt and a typed one,
in a real git repository with two commits (so there is something to compare)."""

from __future__ import annotations

from pathlib import Path

import git
from helpers.repo import REPO_ROOT, commit_files, make_repo

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
