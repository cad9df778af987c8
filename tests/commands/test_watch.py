"""`promptops test --watch` and `promptops lint --watch` (issue 24, item 7).

A real subprocess in a real package: the first run covers everything, a save re-runs
what it touched (the cases of the saved prompt, or of the saved test file), a broken save
is reported with its position and the loop goes on, and SIGINT (Ctrl-C) ends it with
exit status 0.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from helpers.repo import cli_env, make_repo, posix_only

MANIFEST = "name: watched\nversion: 0.1.0\ndescription: watched\n"


def _prompt(text: str) -> str:
    return (f"description: d\narguments:\n  - name: who\n    required: true\n"
            f"messages:\n  - role: user\n    text: \"{text} {{{{ who }}}}\"\n")


def _tests(prompt: str, expect: str, cases: int) -> str:
    body = "".join(f"  - name: case {i}\n    arguments: {{who: Ada}}\n"
                   f"    expect:\n      - contains: [\"{expect}\"]\n" for i in range(cases))
    return f"prompt: {prompt}\ncases:\n{body}"


FILES = {
    "promptops.yaml": MANIFEST,
    "prompts/hello.prompt.yaml": _prompt("Hello"),
    "prompts/bye.prompt.yaml": _prompt("Bye"),
    "tests/hello.test.yaml": _tests("hello", "Hello Ada", 2),
    "tests/bye.test.yaml": _tests("bye", "Bye Ada", 3),
}


class Watcher:
    """``promptops ARGS --watch`` with its merged output read line by line."""

    def __init__(self, root: Path, *args: str, blocked: bool = False) -> None:
        def block() -> None:  # as a parent that blocked them (an in-process serve) leaves it
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})

        self.proc = subprocess.Popen([sys.executable, "-m", "promptops", *args, "--watch"],
                                     cwd=root, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, env=cli_env(), text=True,
                                     preexec_fn=block if blocked else None)
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))

    def until(self, fragment: str, timeout: float = 60) -> list[str]:
        """The lines up to and including the first one holding ``fragment``."""
        got: list[str] = []
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"{fragment!r} never came; so far:\n"
                                     + "\n".join(self.seen)) from None
            got.append(line)
            self.seen.append(line)
            if fragment in line:
                return got

    def interrupt(self) -> int:
        self.proc.send_signal(signal.SIGINT)
        try:
            return self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            time.sleep(0.5)  # the reader thread collects what it printed
            while not self.lines.empty():
                self.seen.append(self.lines.get_nowait())
            raise AssertionError("SIGINT did not end it; its output:\n"
                                 + "\n".join(self.seen)) from None
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()


def _save(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


@posix_only("SIGINT is how a terminal's Ctrl-C reaches the process")
def test_test_watch_reruns_what_a_save_touched_and_ctrl_c_exits_0(tmp_path: Path) -> None:
    root = tmp_path / "pkg"
    make_repo(root, FILES)
    w = Watcher(root, "test")
    try:
        first = w.until("watching")
        assert any("7 passed, 0 failed" in line for line in first), first  # 5 cases + 2 smoke
        # a prompt saved: its own cases (2 + smoke) run, not bye's
        _save(root / "prompts/hello.prompt.yaml", _prompt("Hello there"))
        rerun = w.until("watching")
        assert any("saved: prompts/hello.prompt.yaml" in line for line in rerun), rerun
        assert any("1 passed, 2 failed" in line for line in rerun), rerun  # smoke passes
        # its test file saved to match: those cases again, now passing
        _save(root / "tests/hello.test.yaml", _tests("hello", "Hello there Ada", 2))
        rerun = w.until("watching")
        assert any("2 passed, 0 failed" in line for line in rerun), rerun  # no smoke case
        # a broken save is reported with its position; the loop goes on
        _save(root / "prompts/bye.prompt.yaml", "description: 'never closed\n")
        rerun = w.until("watching")
        assert any("prompts/bye.prompt.yaml:1:14" in line for line in rerun), rerun
        _save(root / "prompts/bye.prompt.yaml", _prompt("Bye"))
        rerun = w.until("watching")
        assert any("4 passed, 0 failed" in line for line in rerun), rerun  # bye: 3 + smoke
    finally:
        rc = w.interrupt()
    assert rc == 0, "\n".join(w.seen)


@posix_only("SIGINT is how a terminal's Ctrl-C reaches the process")
def test_lint_watch_relints_after_a_save_and_ctrl_c_exits_0(tmp_path: Path) -> None:
    root = tmp_path / "pkg"
    make_repo(root, FILES)
    w = Watcher(root, "lint")
    try:
        w.until("watching")
        _save(root / "prompts/hello.prompt.yaml",
              "description: d\nmessages:\n  - role: user\n    text: \"Hi {{ nobody }}\"\n")
        rerun = w.until("watching")
        assert any("re-linted the prompts that read the saved files" in line
                   for line in rerun), rerun
        assert any("prompts/hello.prompt.yaml:4:" in line and "PO201" in line
                   for line in rerun), rerun
    finally:
        rc = w.interrupt()
    assert rc == 0, "\n".join(w.seen)


@posix_only("signal masks are POSIX")
def test_ctrl_c_ends_a_watch_started_with_signals_blocked(tmp_path: Path) -> None:
    """A mask inherited from the parent must not make the watch unstoppable."""
    root = tmp_path / "pkg"
    make_repo(root, FILES)
    w = Watcher(root, "test", blocked=True)
    try:
        w.until("watching")
    finally:
        rc = w.interrupt()
    assert rc == 0, "\n".join(w.seen)


@pytest.mark.parametrize("args", [["test", "--update-snapshots"], ["test", "--ref", "HEAD"],
                                  ["lint", "--fix"]])
def test_watch_refuses_what_would_write_or_read_a_commit(tmp_path: Path,
                                                        args: list[str]) -> None:
    root = tmp_path / "pkg"
    make_repo(root, FILES)
    done = subprocess.run([sys.executable, "-m", "promptops", *args, "--watch"], cwd=root,
                          capture_output=True, text=True, env=cli_env(), timeout=60,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 2, done.stderr
    assert "--watch" in done.stderr
