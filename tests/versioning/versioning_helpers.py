"""Shared material for the diff-engine and versioning tests: one realistic package.

Prompt files are written as JSON (YAML 1.2 is a superset of it) so a test can state a
change as a small edit of a Python dict and the intent stays readable.
"""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path
from typing import Any

from helpers.repo import run_cli

MANIFEST = "name: demo\nversion: 1.0.0\ndescription: Demo prompts\ninstructions: Use them well.\n"

REVIEW: dict[str, Any] = {
    "title": "Review",
    "description": "Review code",
    "icons": [{"src": "https://example.com/review.png", "mimeType": "image/png"}],
    "arguments": [
        {"name": "code", "required": True, "maxLength": 5000},
        {"name": "language", "default": "python", "enum": ["python", "go"]},
        {"name": "style", "pattern": "[a-z]+", "description": "house style"},
    ],
    "messages": [
        {"role": "assistant", "template": "templates/review.j2"},
        {"role": "user", "text": "Review:\n{{ code }}"},
    ],
}

SUMMARY: dict[str, Any] = {
    "description": "Summarise",
    "arguments": [{"name": "text", "required": True}],
    "messages": [
        {"role": "user", "text": '{% include "partials/header.j2" %}\nSummarise {{ text }}'},
        {"role": "user", "resource": {"uri": "file:///guide.md", "file": "docs/guide.md"}},
    ],
}

PLAIN: dict[str, Any] = {
    "description": "Say hello",
    "messages": [{"role": "user", "text": "Hello there"}],
}


def prompt_file(spec: dict[str, Any]) -> str:
    return json.dumps(spec, indent=2) + "\n"


def base_files() -> dict[str, str]:
    return {
        "promptops.yaml": MANIFEST,
        "prompts/review.prompt.yaml": prompt_file(REVIEW),
        "prompts/summary.prompt.yaml": prompt_file(SUMMARY),
        "prompts/plain.prompt.yaml": prompt_file(PLAIN),
        "templates/review.j2": '{% include "partials/header.j2" %}\nI review {{ language }}.\n',
        "partials/header.j2": "You are careful.\n",
        "partials/unused.j2": "Nobody includes me.\n",
        "docs/guide.md": "# Guide\n",
    }


def spec(base: dict[str, Any]) -> dict[str, Any]:
    """A deep copy to edit for one test case."""
    return copy.deepcopy(base)


def apply(root: Path, edits: dict[str, str | None]) -> None:
    """Write (or, for None, delete) package files below ``root``."""
    for rel, content in edits.items():
        path = root / rel
        if content is None:
            path.unlink()
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content, encoding="utf-8")


def promptops(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run the real CLI as a user would, in-process (``helpers.repo.run_cli``)."""
    return run_cli(*args, cwd=cwd)
