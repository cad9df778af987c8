"""`render`, `test` and `check` give the verdict `serve` will (issue 24, items 3 and 10).

A prompt whose declarations contradict each other (a default its own enum or pattern
refuses) is refused by serve's lint gate; `render` rendered the bad default and `test`
passed, so the author learned it when the server would not start. Each command now
refuses it, exit 1, with the lint line serve refuses it with.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.repo import make_repo, run_cli

from promptops.lint.runner import refusal
from promptops.pipeline.build import Build

ENUM = ("  - name: tone\n    description: The tone\n    default: loud\n"
        "    enum: [calm, formal]\n")
PATTERN = ("  - name: tone\n    description: The tone\n    default: Loud\n"
           "    pattern: '[a-z]+'\n")
LINES = {
    "enum": "greet.prompt.yaml:8:14: PO204 [error] default 'loud' of 'tone' is not "
            "one of its enum values (calm, formal)",
    "pattern": "greet.prompt.yaml:8:14: PO205 [error] default 'Loud' of 'tone' does not "
               "match its pattern '[a-z]+'",
}


def _package(tmp: Path, argument: str) -> Path:
    files = {
        "promptops.yaml": "name: demo\nversion: 0.1.0\n",
        "prompts/greet.prompt.yaml": (
            "description: Say hello\n"
            "arguments:\n  - name: who\n    description: Who\n    required: true\n"
            f"{argument}"
            "messages:\n  - role: system\n    text: Be brief.\n"
            "  - role: user\n    text: 'Hello {{ who }}, in a {{ tone }} tone'\n"),
        "tests/greet.test.yaml": ("prompt: greet\ncases:\n  - name: hello\n"
                                  "    arguments: {who: ada}\n"
                                  "    expect:\n      - {message: 1, contains: [ada]}\n"),
    }
    return Path(make_repo(tmp / "demo", files).working_tree_dir or "")


@pytest.mark.parametrize("kind", ["enum", "pattern"])
def test_render_test_and_check_refuse_what_serve_refuses(tmp_path: Path, kind: str) -> None:
    root = _package(tmp_path, ENUM if kind == "enum" else PATTERN)
    line = LINES[kind]
    served = refusal(Build(root, None))  # what serve's lint gate says
    assert served is not None and line in served
    for args in (("render", "greet", "-a", "who=ada"), ("test",), ("check",)):
        run = run_cli(*args, cwd=root)
        assert run.returncode == 1, (args, run.stdout, run.stderr)
        assert line in run.stdout + run.stderr, (args, run.stdout, run.stderr)
        assert "Hello ada" not in run.stdout  # nothing rendered with the bad default


def test_render_labels_a_system_message_as_authored_and_served(tmp_path: Path) -> None:
    root = _package(tmp_path, ENUM.replace("default: loud", "default: calm"))
    run = run_cli("render", "greet", "-a", "who=ada", cwd=root)
    assert run.returncode == 0, run.stderr
    assert run.stdout == ("── system (served as user)\nBe brief.\n\n"
                          "── user\nHello ada, in a calm tone\n")
    served = run_cli("render", "greet", "-a", "who=ada", cwd=root)
    assert served.stdout.startswith("── system (served as user)")
