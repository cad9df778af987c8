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


_SYSTEM_OLD = "You write commit messages in the Conventional Commits style."
_SYSTEM_NEW = "You write terse commit messages in the Conventional Commits style, one line."
_COMMIT_TEXT = ('"Write a {{ type }} commit message (subject line under 72 characters) '
                'for these changes:\\n\\n{{ changes }}"')


def _commit_prompt(*, breaking: bool) -> str:
    """commit_message with a system message; ``breaking``: a required argument (scope)
    added, an enum value (chore) removed and the system message edited."""
    scope = ("  - name: scope\n    title: Scope\n    description: The part of the code changed\n"
             "    required: true\n") if breaking else ""
    kinds = "feat, fix, docs, refactor, test" + ("" if breaking else ", chore")
    text = _COMMIT_TEXT.replace("commit message", "commit message for {{ scope }}") \
        if breaking else _COMMIT_TEXT
    return (
        "title: Write a Commit Message\n"
        "description: Generates a concise, conventional commit message\n"
        "arguments:\n"
        "  - name: changes\n    title: Changes\n    description: Git diff or a description\n"
        "    required: true\n"
        f"{scope}"
        "  - name: type\n    title: Type\n    description: Conventional commit type\n"
        f"    default: feat\n    enum: [{kinds}]\n"
        "messages:\n"
        f"  - role: system\n    text: {_SYSTEM_NEW if breaking else _SYSTEM_OLD}\n"
        f"  - role: user\n    text: {text}\n"
    )


def _commit_tests(*, breaking: bool) -> str:
    chore = ("  - name: a chore\n    arguments: {changes: Bump the linter, type: chore}\n"
             "    expect:\n      - {message: 1, contains: [chore]}\n")
    scope = ", scope: parser" if breaking else ""
    return (
        "prompt: commit_message\ncases:\n"
        "  - name: a fix\n"
        f"    arguments: {{changes: Handle empty input in parse(), type: fix{scope}}}\n"
        "    expect:\n      - {message: 1, contains: [fix commit message]}\n"
        + ("" if breaking else chore)
    )


def breaking_base(files: Mapping[str, str | bytes | None]) -> Files:
    """The starter with a commit_message that has a system message and a test using
    every enum value the breaking change touches."""
    return {"prompts/commit_message.prompt.yaml": _commit_prompt(breaking=False),
            "tests/commit_message.test.yaml": _commit_tests(breaking=False)}


def breaking_change() -> Files:
    """The breaking review scenario (issue 24): a required argument added, an enum value
    removed, the system message edited, the version left as it was."""
    return {"prompts/commit_message.prompt.yaml": _commit_prompt(breaking=True),
            "tests/commit_message.test.yaml": _commit_tests(breaking=True)}
