"""Real git repositories for the review tests, with commits whose hashes never change.

Commit dates and author are fixed, so the same files give the same commit ids on every
run and machine; that is what lets the markdown report be compared with a golden file.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import git
from helpers.repo import REPO_ROOT, Files, commit_files, make_repo

STARTER = REPO_ROOT / "templates"
# A frozen copy of the starter (as committed when these tests were written), so edits to
# the live starter do not change the golden report; docs/gen_review_example.py uses the
# live one.
FROZEN_STARTER = Path(__file__).resolve().parent / "fixtures" / "starter"
GOLDEN = Path(__file__).resolve().parent / "golden"
_SKIP = (".github/", ".pre-commit-config.yaml", ".gitignore")



def starter_files(prefix: str = "", root: Path = FROZEN_STARTER) -> dict[str, str | bytes | None]:
    """The starter package's files (no CI scaffolding), optionally below ``prefix``/."""
    out: dict[str, str | bytes | None] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and not rel.startswith(_SKIP):
            out[prefix + rel] = path.read_bytes()
    return out


def day(n: int) -> str:
    """The fixed date of commit number ``n``: what keeps commit ids the same everywhere."""
    return f"2026-01-{n + 1:02d}T12:00:00+00:00"


def fixed_commit(repo: git.Repo, files: Files, message: str, n: int) -> str:
    """Write (None: delete) ``files``, commit everything on day ``n``; returns the sha."""
    return commit_files(repo, files, message, date=day(n))


def fixed_repo(root: Path, files: Files, message: str = "base") -> git.Repo:
    return make_repo(root, files, message, date=day(0))


def edit(text: str | bytes | None, old: str, new: str) -> str:
    """``text`` with ``old`` replaced once; fails loudly when the starter no longer has it."""
    assert text is not None
    s = text.decode() if isinstance(text, bytes) else text
    assert old in s, f"{old!r} not in the file; update the test scenario"
    return s.replace(old, new, 1)


def feature_change(files: Mapping[str, str | bytes | None], prefix: str = "") -> Files:
    """The review scenario on top of the starter: a partial edit, an argument removed
    from commit_message (breaking), describe_diagram renamed; explain_error untouched."""
    p = prefix
    return {
        f"{p}partials/house_style.j2": edit(
            files[f"{p}partials/house_style.j2"], "at most ten findings", "at most five findings"
        ),
        f"{p}prompts/commit_message.prompt.yaml": edit(
            edit(files[f"{p}prompts/commit_message.prompt.yaml"],
                 "  - name: type\n    title: Type\n    description: Conventional commit type\n"
                 "    default: feat\n    enum: [feat, fix, docs, refactor, test, chore]\n", ""),
            "Write a {{ type }} commit message", "Write a conventional commit message",
        ),
        f"{p}tests/commit_message.test.yaml": edit(
            edit(files[f"{p}tests/commit_message.test.yaml"], ", type: fix}", "}"),
            "Write a fix commit message", "Write a conventional commit message",
        ),
        f"{p}prompts/describe_diagram.prompt.yaml": edit(
            files[f"{p}prompts/describe_diagram.prompt.yaml"],
            "name: describe_diagram", "name: explain_diagram",
        ),
        f"{p}tests/describe_diagram.test.yaml": edit(
            files[f"{p}tests/describe_diagram.test.yaml"],
            "prompt: describe_diagram", "prompt: explain_diagram",
        ),
    }
