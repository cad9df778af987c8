"""The README runs as written: every command block, in order, in one shell, on a copy.

A reader types the blocks into one terminal, so they run in one ``bash`` fed line by
line (a ``cd`` or an activated virtualenv carries on to the next block, exactly as for
the reader) in a copy of this checkout inside an empty temp folder. The set-up command
really creates a virtualenv and pip-installs the copy; ``promptops init ../demo`` writes
beside it, as it would beside a fresh clone.

``promptops serve`` is the last command: the test plays the MCP client, sending
``initialize`` on the shell's stdin (which serve inherits) and reading the reply, then
closing stdin, which ends serve and the shell.

The one block not run here is the test command, which would run this suite inside
itself: ``.ci/run`` runs it verbatim (asserted below), and CI runs ``.ci/run``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from helpers.repo import REPO_ROOT, cli_env, copy_checkout
from helpers.starter import mcp_validator

README = REPO_ROOT / "README.md"
FENCE = re.compile(r"(?ms)^```([\w-]*)\n(.*?)^```\n")
SHELLS = {"bash", "sh", "shell", "console"}
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "clientInfo": {"name": "readme-test", "version": "1.0"}}}


def blocks() -> list[tuple[str, str]]:
    """(language, body) of every fenced block of the README, in order."""
    return [(m.group(1), m.group(2)) for m in FENCE.finditer(README.read_text("utf-8"))]


def commands() -> list[list[str]]:
    """The command lines of each shell block (comments and blank lines dropped)."""
    out = []
    for lang, body in blocks():
        if lang in SHELLS:
            lines = [ln for ln in body.splitlines() if ln.strip() and not ln.startswith("#")]
            out.append(lines)
    return out


def test_every_command_block_is_marked_as_shell() -> None:
    """An unmarked block must not be a command: it would escape the test below."""
    for lang, body in blocks():
        if lang == "":
            assert not re.search(r"(?m)^(\$ |promptops |python3? |pip |cd |git )", body), body


def test_the_readme_keeps_exactly_two_set_up_commands() -> None:
    setup = [lines for lines in commands() if any("pip install" in ln for ln in lines)]
    assert [len(lines) for lines in setup] == [1, 1]
    install, tests = setup[0][0], setup[1][0]
    assert "promptops init" in install and "promptops check" in install
    assert tests.endswith("python -m pytest && python -m pytest -m process"), tests
    assert "[test]" in tests


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    (test_command,) = [lines[0] for lines in commands() if lines[0].endswith("-m process")]
    ci_run = (REPO_ROOT / ".ci/run").read_text(encoding="utf-8").splitlines()
    assert test_command in ci_run
    workflow = (REPO_ROOT / ".github/workflows/ci.yml").read_text(encoding="utf-8")
    assert "run: .ci/run" in workflow


class Shell:
    """One bash reading commands from a pipe, as a terminal would feed them."""

    def __init__(self, cwd: Path, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(["bash", "--noprofile", "--norc"], cwd=cwd, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self.stderr: list[bytes] = []
        threading.Thread(target=lambda: self.stderr.extend(self.proc.stderr or []),
                         daemon=True).start()
        self.count = 0

    def run(self, line: str) -> tuple[int, str]:
        """Run one command line; its exit status and its stdout."""
        self.count += 1
        marker = f"__readme_{self.count}__"
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(f'{line}\nprintf "\\n{marker}=%s\\n" "$?"\n'.encode())
        self.proc.stdin.flush()
        out: list[str] = []
        for raw in self.proc.stdout:
            text = raw.decode("utf-8", "replace")
            if text.startswith(marker + "="):  # printf's leading newline ends ``out``
                return int(text.split("=", 1)[1]), "".join(out)[:-1]
            out.append(text)
        raise AssertionError(f"the shell ended during {line!r}: {b''.join(self.stderr)!r}")

    def last(self, line: str, message: bytes) -> tuple[int, list[str]]:
        """Run the final command with ``message`` on its stdin, then end the input."""
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(f"{line}\n".encode() + message + b"\n")
        self.proc.stdin.close()
        lines = [raw.decode("utf-8") for raw in self.proc.stdout]
        return self.proc.wait(timeout=60), lines


@pytest.mark.skipif(sys.platform == "win32",
                    reason="the README's blocks are POSIX shell (bash, .venv/bin/activate)")
def test_the_readme_command_blocks_run_verbatim_in_order(tmp_path: Path) -> None:
    checkout = tmp_path / "promptops"
    copy_checkout(checkout)
    env = cli_env(HOME=os.environ.get("HOME", str(tmp_path)))
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep)
                                  if Path(sys.executable).parent != Path(p))
    env.pop("VIRTUAL_ENV", None)  # the reader's shell has no virtualenv active
    # pip's byte-compiling of every file of every dependency it installs is not what the
    # README's commands are checked for (24.4 -> 21.8 s CPU without it, loaded machine):
    # the commands compile what they import, as Python does without pip's pass
    env["PIP_NO_COMPILE"] = "1"
    shell = Shell(checkout, env)
    lines = [ln for block in commands() for ln in block]
    ran: list[str] = []
    try:
        for line in lines[:-1]:
            if line.endswith("python -m pytest -m process"):
                continue  # the suite itself: run verbatim by .ci/run
            code, out = shell.run(line)
            ran.append(line)
            assert code == 0, f"{line!r} exited {code}:\n{out}\n{b''.join(shell.stderr)!r}"
            if "promptops check" in line:
                assert "demo 0.1.0: 5 prompts" in b"".join(shell.stderr).decode()
            if line.startswith("promptops build"):
                assert re.fullmatch(r"dist/demo-0\.1\.0\.bundle\.json\n", out), out
        assert lines[-1].startswith("promptops serve"), "serve ends the README's commands"
        code, replies = shell.last(lines[-1], json.dumps(INITIALIZE).encode())
    finally:
        if shell.proc.poll() is None:
            shell.proc.kill()
    assert code == 0, b"".join(shell.stderr).decode()
    (reply,) = (json.loads(line) for line in replies if line.strip())  # protocol only
    assert reply["id"] == 1 and reply["result"]["protocolVersion"] == "2025-11-25"
    mcp_validator("InitializeResult").validate(reply["result"])
    assert reply["result"]["serverInfo"]["name"] == "promptops"
    assert (checkout / ".venv").is_dir() and (tmp_path / "demo" / ".git").is_dir()
    assert any(ln.startswith("cd ../demo") for ln in ran)
