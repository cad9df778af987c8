"""serve's refusal of a commit (lint.runner.refusal, logged when a commit is not published)
leads with the errors that are the reason, each with its excerpt, not with whatever warnings
sort first."""

from __future__ import annotations

from pathlib import Path

from helpers.repo import write_files

from promptops.lint.runner import refusal
from promptops.pipeline.build import Build


def test_the_refusal_shows_the_errors_not_the_warnings(tmp_path: Path) -> None:
    files = {"promptops.yaml": "name: demo\nversion: 1.0.0\n",
             "prompts/zz.prompt.yaml": ("description: d\nmessages:\n  - role: user\n"
                                        "    text: \"Hi {{ whom }}.\"\n")}
    files.update({f"prompts/a{i}.prompt.yaml": "messages:\n  - role: user\n    text: Hi.\n"
                  for i in range(3)})
    write_files(tmp_path, files)
    why = refusal(Build(tmp_path, None))
    assert why is not None
    assert why.splitlines() == [
        "lint fails (1 error, 3 warnings); `promptops build` refuses it too:",
        f"{tmp_path}/prompts/zz.prompt.yaml:4:18: PO201 [error] variable 'whom' is not a "
        "declared argument",
        "      text: \"Hi {{ whom }}.\"",
        " " * 19 + "^",
    ]
    write_files(tmp_path, {"prompts/zz.prompt.yaml": "description: d\nmessages:\n"
                           "  - role: user\n    text: Hi.\n"})
    assert refusal(Build(tmp_path, None)) is None
