"""The suite's one `promptops serve` client: a real subprocess over real pipes.

Every area's serve client (the judged raw client of tests/serve, the hardening and
follow tests' servers, the fuzzers' driver) is this class plus what its area asks of it.
stdout is read by a thread into :attr:`messages` (a line that is not JSON arrives as
``("unparseable", first 200 bytes)``, the end as an ``EOFError``); stderr is drained by
another into :attr:`stderr` (decoded lines, at most 1 MiB kept), unless a test reads the
pipe itself (``drain_stderr=False``).
"""

from __future__ import annotations

import contextlib
import json
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

STDERR_KEPT = 1 << 20


def serve_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "promptops", "serve", *args]


class ServeProcess:
    """``promptops serve ARGS`` as a subprocess, its output read by threads."""

    def __init__(self, args: list[str], *, cwd: Path | None = None,
                 env: dict[str, str] | None = None, drain_stderr: bool = True) -> None:
        self.proc = subprocess.Popen(serve_cmd(*args), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd,
                                     env=env)
        self.messages: queue.Queue[Any] = queue.Queue()
        self.stderr: list[str] = []
        self._err_lines: queue.Queue[str] = queue.Queue()
        self._kept = 0
        self._reading = threading.Event()
        self._reading.set()
        threading.Thread(target=self._pump_out, daemon=True).start()
        self._err_thread: threading.Thread | None = None
        if drain_stderr:
            self._err_thread = threading.Thread(target=self._pump_err, daemon=True)
            self._err_thread.start()

    def decode(self, raw: bytes) -> Any:
        """One stdout line as a message (the fuzzers read it as the documented rules do)."""
        return json.loads(raw)

    def _pump_out(self) -> None:
        assert self.proc.stdout is not None
        while self._reading.wait():
            raw = self.proc.stdout.readline()
            if not raw:
                break
            try:
                self.messages.put(self.decode(raw))
            except ValueError:
                self.messages.put(("unparseable", raw[:200]))
        self.messages.put(EOFError())

    def _pump_err(self) -> None:
        assert self.proc.stderr is not None
        for raw in self.proc.stderr:
            line = raw.decode(errors="replace")
            if self._kept < STDERR_KEPT:
                self._kept += len(raw)
                self.stderr.append(line)
            self._err_lines.put(line)

    def stop_reading(self) -> None:
        """Leave the server's stdout unread (after at most one more line) until resumed."""
        self._reading.clear()

    def resume_reading(self) -> None:
        self._reading.set()

    def write(self, data: bytes) -> bool:
        """``data`` on the server's stdin; False once the server stopped reading it."""
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
            return True
        except (BrokenPipeError, OSError):
            return False

    def send_json(self, msg: Any) -> None:
        assert self.write(json.dumps(msg).encode() + b"\n"), "the server stopped reading"

    def next_message(self, timeout: float = 15) -> Any:
        """The next stdout message; EOFError once the server closed its stdout."""
        msg = self.messages.get(timeout=timeout)
        if isinstance(msg, EOFError):
            raise msg
        return msg

    def wait_log(self, fragment: str, timeout: float = 30) -> str:
        """The first stderr line holding ``fragment`` (already seen or yet to come)."""
        for line in self.stderr:
            if fragment in line:
                return line
        deadline = time.monotonic() + timeout
        while True:
            line = self._err_lines.get(timeout=max(0.0, deadline - time.monotonic()))
            if fragment in line:
                return line

    def stderr_text(self) -> str:
        return "".join(self.stderr)

    def close(self, timeout: float = 15) -> int:
        """Close stdin (the end of the session) and wait; killed if it does not exit."""
        assert self.proc.stdin is not None
        with contextlib.suppress(OSError):
            self.proc.stdin.close()
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        if self._err_thread is not None:
            self._err_thread.join(timeout=5)  # the pipe is closed: the rest is read
        return rc

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


async def prompt_names(session: Any) -> list[str]:
    """Every prompt name an official-SDK ``ClientSession`` lists, page by page."""
    from mcp import types  # deferred: only the SDK-client tests need the SDK

    names: list[str] = []
    cursor = None
    while True:
        page = await session.list_prompts(
            params=types.PaginatedRequestParams(cursor=cursor) if cursor else None)
        names += [p.name for p in page.prompts]
        cursor = page.next_cursor
        if not cursor:
            return names
