"""serve's front doors (issue 25): one options object, one wiring, one error path.

The usage errors keep their words and exit codes now that they are raised as
:class:`~promptops.errors.UsageError` from ``ServeOptions`` and met by ``serve_main``'s one
``except`` for both transports; the reporter counts failures by type, never by words.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.repo import run_cli

from promptops.serve.assemble import Reporter
from promptops.serve.background import BuildFailed, News
from promptops.serve.options import ServeOptions, parser


@pytest.mark.parametrize(("argv", "line"), [
    (["--page-size", "0"], "--page-size must be at least 1 and --ttl-ms at least 0"),
    (["--bundle", "x.json", "--ref", "HEAD"],
     "--bundle serves fixed bundles; it cannot be combined with PATH, --ref or --channel"),
    (["--channel", "production", "--ref", "HEAD"],
     "--channel follows a channel, --ref serves a fixed commit: pick one"),
    (["--worktree", "--ref", "HEAD"], "--worktree serves the working tree; it cannot be "
                                      "combined with --bundle or --ref"),
    (["--http", "no-such-folder"], "--http 'no-such-folder': expected [HOST:]PORT"),
])
def test_usage_errors_keep_their_words_and_exit_code(tmp_path: Path, argv: list[str],
                                                     line: str) -> None:
    done = run_cli("serve", *argv, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"promptops serve: error: {line}\n"


def test_a_folder_without_a_package_is_a_usage_error(tmp_path: Path) -> None:
    done = run_cli("serve", str(tmp_path))
    assert done.returncode == 2
    assert done.stderr.startswith(f"promptops serve: error: {tmp_path} is not a package folder")


def test_http_options_exist_only_with_http() -> None:
    stdio = {f for a in parser()._actions for f in a.option_strings}
    http = {f for a in parser(http=True)._actions for f in a.option_strings}
    assert "--worktree" in stdio - http and {"--http", "--tokens", "--repo"} <= http - stdio
    options = ServeOptions.parse(["--http", "[::1]:81", "--port", "82", "--channel", "a"])
    assert (options.host, options.port, options.channel) == ("::1", 82, ("a",))
    assert ServeOptions.parse(["--channel", "a"]).http is None


def test_the_reporter_counts_failures_by_type_not_by_words() -> None:
    reporter, heard, failed = Reporter(), [], []
    reporter.clients.append(lambda level, message: heard.append((level, message)))
    reporter.failures.append(failed.append)
    reporter.notify(News("warning", "commit abc does not build"))  # words: not a failure
    refused = BuildFailed("error", "lint fails (PO101); `promptops build` refuses it too")
    reporter.notify(refused)
    assert failed == [refused]
    assert heard == [("warning", "commit abc does not build"), ("error", refused.message)]
