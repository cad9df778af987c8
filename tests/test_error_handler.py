"""One error handler: every command and ``promptops serve`` map failures the same way.

serve is dispatched before typer (its cold start), so a failure that escapes it reaches
the handler from the entry point; before, a bug there was a Python traceback and exit 1.
"""

from __future__ import annotations

import pytest

import promptops.serve.main
from promptops.__main__ import main
from promptops.errors import UsageError


def escaping(exc: BaseException) -> object:
    def serve_main(argv: list[str], gate: object = None) -> int:
        raise exc

    return serve_main


@pytest.mark.parametrize(("exc", "code", "first"), [
    (RuntimeError("boom"), 3, "promptops serve: internal error: RuntimeError: boom"),
    (KeyboardInterrupt(), 130, "promptops serve: interrupted"),
    (UsageError("no such folder"), 2, "promptops serve: error: no such folder"),
    (BrokenPipeError(), 1, None),
])
def test_what_escapes_serve_meets_the_one_handler(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        exc: BaseException, code: int, first: str | None) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setattr(promptops.serve.main, "serve_main", escaping(exc))
    assert main(["serve", "--bundle", "x.json"]) == code
    out, err = capsys.readouterr()
    assert out == ""  # stdout carries protocol messages only
    lines = err.splitlines()
    if first is None:
        assert lines == []
    else:
        assert lines[0] == first
        assert all(line.startswith("promptops serve: ") for line in lines), lines


def test_a_command_bug_reads_the_same_without_the_label(
        capsys: pytest.CaptureFixture[str]) -> None:
    from promptops.console import Console
    from promptops.error_handler import run_guarded

    def broken() -> int:
        raise RuntimeError("boom")

    assert run_guarded(broken, Console()) == 3
    assert capsys.readouterr().err.startswith("internal error: RuntimeError: boom\n")
