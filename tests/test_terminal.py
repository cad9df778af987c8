"""Progress and colour by the ecosystem's rules, seen through a real pseudo-terminal.

Each run is a real ``promptops`` process whose stdin, stdout and stderr are the slave
side of a pty (what a terminal gives it) or plain pipes (what a CI log or a script gives
it); the test reads the bytes it wrote. Progress (rich, on stderr) is drawn only for a
person at a terminal: never under ``-q``, ``TERM=dumb`` or a CI system, which gets one
summary line instead. Colour follows NO_COLOR, FORCE_COLOR, CLICOLOR_FORCE and TERM=dumb.
"""

from __future__ import annotations

import errno
import os
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers.repo import cli_env, posix_only

pytestmark = posix_only("pseudo-terminals are POSIX")
HIDE_CURSOR = b"\x1b[?25l"


@pytest.fixture(scope="module")
def starter(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("term") / "pkg"
    done = subprocess.run([sys.executable, "-m", "promptops", "init", str(root)],
                          env=cli_env(), capture_output=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return root


def _env(**extra: str) -> dict[str, str]:
    env = cli_env(**extra)
    for name in ("NO_COLOR", "FORCE_COLOR", "CLICOLOR_FORCE", "CLICOLOR", "GITHUB_ACTIONS",
                 "TERM"):
        if name not in extra:
            env.pop(name, None)
    env.setdefault("TERM", "xterm-256color")
    return env


def on_pty(args: list[str], cwd: Path, **extra: str) -> bytes:
    """Everything a promptops process writes to its terminal (stdout and stderr)."""
    import pty

    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "promptops", *args], cwd=cwd,
                            stdin=slave, stdout=slave, stderr=slave, env=_env(**extra))
    os.close(slave)
    out = b""
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(master, 65536)
            except OSError as exc:  # EIO: the child closed the terminal
                if exc.errno != errno.EIO:
                    raise
                break
            if not chunk:
                break
            out += chunk
    finally:
        os.close(master)
        proc.wait(timeout=60)
    return out


def piped(args: list[str], cwd: Path, **extra: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "promptops", *args], cwd=cwd,
                          env=_env(**extra), capture_output=True, timeout=120, check=False,
                          stdin=subprocess.DEVNULL)


def test_a_terminal_gets_progress_and_a_ci_log_a_summary(starter: Path) -> None:
    drawn = on_pty(["test"], starter)
    assert HIDE_CURSOR in drawn and b"\x1b[?25h" in drawn  # rich's live bar, then restored
    assert b"test: " not in drawn.split(b"passed")[-1]  # no summary line on a terminal
    for extra in ({"GITHUB_ACTIONS": "true"},):  # GitHub sets CI too; either one is enough
        log = on_pty(["test"], starter, **extra)
        assert HIDE_CURSOR not in log and b"\r" not in log.replace(b"\r\n", b"\n")
        assert b"test: " in log and b" cases in " in log
    dumb = on_pty(["test"], starter, TERM="dumb")
    assert HIDE_CURSOR not in dumb and b"\x1b[" not in dumb


def test_quiet_draws_nothing_and_prints_no_summary(starter: Path) -> None:
    for extra in ({"CI": "true"},):
        out = on_pty(["-q", "test"], starter, **extra)
        assert HIDE_CURSOR not in out and b" cases in " not in out


def test_every_long_command_shows_progress_on_a_terminal(starter: Path) -> None:
    for args in (["check"], ["build", "--worktree", "-o", str(starter / "dist")]):
        out = on_pty(args, starter)  # check: lint's spinner, then the bar of test cases
        assert HIDE_CURSOR in out, args
    assert HIDE_CURSOR not in on_pty(["check"], starter, CI="true")


LINT_ERROR = "messages:\n  - role: user\n    text: '{{ missing }}'\n"


@pytest.mark.parametrize(("extra", "coloured"), [
    ({}, False),
    ({"FORCE_COLOR": "1"}, True),
    ({"FORCE_COLOR": "0"}, False),
    ({"CLICOLOR_FORCE": "1", "CI": "true"}, True),
    ({"FORCE_COLOR": "1", "NO_COLOR": "1"}, False),
])
def test_colour_follows_the_variables_when_piped(starter: Path, extra: dict[str, str],
                                                 coloured: bool) -> None:
    (starter / "prompts" / "zz_bad.prompt.yaml").write_text(LINT_ERROR)
    try:
        done = piped(["lint"], starter, **extra)
    finally:
        (starter / "prompts" / "zz_bad.prompt.yaml").unlink()
    assert done.returncode == 1, done.stderr
    assert (b"\x1b[" in done.stdout) is coloured, (extra, done.stdout[:300])
    assert HIDE_CURSOR not in done.stderr  # forcing colour never forces animation


def test_no_color_and_dumb_terminals_get_no_colour(starter: Path) -> None:
    (starter / "prompts" / "zz_bad.prompt.yaml").write_text(LINT_ERROR)
    try:
        for extra in ({"NO_COLOR": "1"}, {"TERM": "dumb"}):
            out = on_pty(["lint"], starter, **extra)
            assert b"zz_bad.prompt.yaml" in out
            assert b"\x1b[3" not in out and b"\x1b[1m" not in out, extra
        assert b"\x1b[" in on_pty(["lint"], starter)  # the same run on a terminal: colour
    finally:
        (starter / "prompts" / "zz_bad.prompt.yaml").unlink()


def test_shell_completion_is_installable() -> None:
    # The shell is detected from the parent process, here pytest: typer's own switch
    # turns detection off, so the shell is named instead.
    env = {**_env(), "_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"}
    done = subprocess.run([sys.executable, "-m", "promptops", "--show-completion", "bash"],
                          env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert "_promptops_completion()" in done.stdout and "complete " in done.stdout
