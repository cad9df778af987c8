"""The CLI in-process: exact output and exit codes.

The subprocess tests in test_cli.py prove the installed entry point; these drive the
same entry point in-process (``helpers.repo.run_cli``), which is how most CLI regressions
are quickest to pin down.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.repo import make_repo, run_cli

PKG = {
    "promptops.yaml": "name: demo\nversion: 0.1.0\n",
    "prompts/greet.prompt.yaml": (
        "description: Say hello\n"
        "arguments:\n  - name: who\n    required: true\n    pattern: '[a-z]+'\n"
        "messages:\n  - role: user\n    text: Hello {{ who }}!\n"
    ),
}


@pytest.fixture
def pkg(tmp_path: Path) -> Iterator[Path]:
    root = Path(make_repo(tmp_path / "demo", PKG).working_tree_dir or "")
    cwd = Path.cwd()
    os.chdir(root)
    try:
        yield root
    finally:
        os.chdir(cwd)


def invoke(*args: str) -> tuple[int, str, str]:
    result = run_cli(*args)
    return result.returncode, result.stdout, result.stderr


def test_render_prints_the_transcript(pkg: Path) -> None:
    assert invoke("render", "greet", "-a", "who=ada") == (0, "── user\nHello ada!\n", "")


def test_render_refuses_a_value_against_the_pattern(pkg: Path) -> None:
    code, out, err = invoke("render", "greet", "-a", "who=Ada")
    assert (code, out) == (1, "")
    assert err == (
        "error: argument 'who' does not match its pattern '[a-z]+'\n"
    )


def test_ls_lists_required_arguments_bare(pkg: Path) -> None:
    assert invoke("ls") == (0, "greet who  — Say hello\n", "")


def test_check_reports_validation_lint_and_tests_on_stderr(pkg: Path) -> None:
    code, out, err = invoke("check")
    assert (code, out) == (1, "")  # the smoke case cannot satisfy the pattern (see below)
    lines = err.splitlines()
    assert lines[0] == "demo 0.1.0: 1 prompt, 0 template files: ok"
    assert "lint: 0 errors, 1 warning" in lines
    assert lines[-1] == "tests: 0 passed, 1 failed"


def test_broken_package_lists_every_problem_and_exits_1(pkg: Path) -> None:
    (pkg / "prompts/greet.prompt.yaml").write_text("descripton: x\nmessages: []\n")
    code, out, err = invoke("ls")
    assert (code, out) == (1, "")
    assert err.splitlines() == [
        "prompts/greet.prompt.yaml:1:1: unknown key 'descripton'; did you mean 'description'?",
        "prompts/greet.prompt.yaml:2:11: messages: List should have at least 1 item after "
        "validation, not 0",
        "2 problems found",
    ]


def test_a_smoke_case_without_a_valid_value_says_how_to_give_one(pkg: Path) -> None:
    code, out, _ = invoke("test")
    assert code == 1
    assert (
        "  - render failed with error -32602: argument 'who' does not match its pattern "
        "'[a-z]+'; the smoke case had no valid value for 'who': give the argument `examples:` "
        "(a value that passes its rules) to render it with, or say why it cannot in the "
        "prompt file (`smoke: {skip: <why>}`)"
    ) in out.splitlines()
    (pkg / "prompts/greet.prompt.yaml").write_text(
        PKG["prompts/greet.prompt.yaml"].replace("    required: true\n",
                                                 "    required: true\n    examples: [ada]\n")
    )
    assert invoke("test")[0] == 0


def test_unknown_option_is_a_usage_error(pkg: Path) -> None:
    code, _, _ = invoke("ls", "--no-such-option")
    assert code == 2


@pytest.mark.parametrize("args", [["serve", "--channel", "production", "--ref", "HEAD"],
                                  ["serve", "--http", "127.0.0.1:0", "--no-such-option"],
                                  ["serve", "--no-such-option"]])
def test_serve_in_process_leaves_the_signals_as_it_found_them(pkg: Path, args: list[str]) -> None:
    """serve's exit blocks and ignores SIGINT/SIGTERM (it is the process's exit); run in
    this process it must not leave them so: a mask and an ignored signal pass through
    exec to every server a later test starts, which then never stops on SIGTERM."""
    import signal

    before = (signal.pthread_sigmask(signal.SIG_BLOCK, set()),
              signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM))
    code, _, err = invoke(*args)
    assert code == 2, err
    after = (signal.pthread_sigmask(signal.SIG_BLOCK, set()),
             signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM))
    assert after == before
