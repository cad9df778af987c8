"""`promptops serve --help`: both transports, in the style of every other command (issue 24,
item 11). The page is built from the stdio and HTTP parsers, so an option added to either
shows here; serving itself never imports the help (nor click)."""

from __future__ import annotations

import re
import subprocess
import sys

from helpers.repo import run_cli

from promptops.serve.options import parser


def _help(*args: str) -> str:
    run = run_cli(*args, "--help", COLUMNS="80")
    assert run.returncode == 0, run.stderr
    assert run.stderr == ""
    return run.stdout


def test_serve_help_shows_both_transports_and_every_option() -> None:
    page = _help("serve")
    assert "--http [HOST:]PORT" in page and "HTTP options (with --http):" in page
    assert "stdio options:" in page and "--worktree, --dev" in page
    for asked in (parser(), parser(http=True)):
        for action in asked._actions:
            for flag in action.option_strings:
                assert re.search(rf"(^|[ ,]){re.escape(flag)}\b", page), flag
    assert _help("serve", "--http") == page  # asking from either transport: one page


def test_serve_help_has_the_style_of_the_other_commands() -> None:
    page, lint = _help("serve"), _help("lint")

    def shape(text: str) -> list[str]:
        """Usage line, section headings and the help option's line, as laid out."""
        return [re.sub(r"promptops \w+ .*", "promptops CMD ...", line) for line in
                text.splitlines() if line.startswith(("Usage:", "Arguments:", "Options:"))
                or line.strip().startswith("-h, --help")]

    assert [re.sub(r"\s+", " ", s) for s in shape(page)] == \
        [re.sub(r"\s+", " ", s) for s in shape(lint)]
    assert page.startswith("Usage: promptops serve [OPTIONS] [PATH]...\n\n  Serve ")
    assert "usage: promptops serve" not in page  # not argparse's
    assert "positional arguments" not in page and "\noptions:\n" not in page


def test_serving_does_not_import_the_help() -> None:
    code = ("import sys; import promptops.__main__, promptops.serve.main; "
            "print(sorted(m for m in ('click', 'typer', 'promptops.serve.help') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60)
    assert out.stdout.strip() == "[]"
