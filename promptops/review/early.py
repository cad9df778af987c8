"""The lint gate of a large review, started as soon as HEAD is built, in a forked process.

A review of thousands of prompts spends its first seconds on one core: building both ends,
the diff engine, the test plan, the argument sets, the proof that a prompt is unaffected.
The lint gate needs only HEAD's build, and used to run in this process while the render
pool worked, so the second core idled through all of that and the pool then shared two
cores between three processes. Forked right after HEAD is built, lint uses the idle core
from then on; the report waits for its status (a small object sent back through a pipe)
only when it needs it.

The child is a fork, so it lints the very build this process holds (nothing is pickled
but the status) and writes lint's cache exactly as an in-process lint would. Where fork
is not available (Linux only), or the package is small (a fork costs more than linting a few hundred
prompts), or the child dies without answering, lint runs here, as before: the status is
the same either way (``tests/review/test_review_early_lint.py``).
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from typing import TYPE_CHECKING

from promptops.review import gates

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

    from promptops.pipeline.build import Build

EARLY_LINT_PROMPTS = 500  # below this, linting here costs less than forking for it


class Lint:
    """HEAD's lint status, computed in a forked child or, failing that, here."""

    def __init__(self, head: Build | None, *, fork: bool) -> None:
        self.head = head
        self._status: gates.CheckStatus | None = None
        self._child: multiprocessing.process.BaseProcess | None = None
        self._conn: Connection | None = None
        if fork and head is not None:
            for stream in (sys.stdout, sys.stderr):  # a fork's exit flushes its copy again
                stream.flush()
            ctx = multiprocessing.get_context("fork")
            self._conn, send = ctx.Pipe(duplex=False)
            self._child = ctx.Process(target=_lint_child, args=(head, send), daemon=True)
            self._child.start()
            send.close()

    @classmethod
    def start(cls, head: Build | None, prompts: int) -> Lint:
        """Lint ``head`` early in a child when the package has enough ``prompts`` and this
        platform forks; else lazily, here, when :meth:`status` is first asked."""
        # Linux only: macOS has fork, but its system libraries are not fork-safe (why
        # Python's default there is spawn), and a spawned child would load the package again
        forks = (sys.platform.startswith("linux")
                 and "fork" in multiprocessing.get_all_start_methods())
        return cls(head, fork=forks and prompts >= EARLY_LINT_PROMPTS
                   and (os.cpu_count() or 1) > 1)

    @property
    def forked(self) -> bool:
        return self._child is not None

    def stop(self) -> None:
        """End the child unasked (the review does not show the gate): lint's cache
        writes are atomic, so a child stopped at any moment leaves no partial file."""
        if self._child is not None and self._status is None:
            self._child.terminate()
            self._child.join()
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            self._child = None

    def status(self) -> gates.CheckStatus:
        """The gate's status (waits for the child if one is linting)."""
        if self._status is None:
            if self._conn is not None:
                self._status = _receive(self._conn)
                self._conn.close()
                self._conn = None
                assert self._child is not None
                self._child.join()
            if self._status is None:  # no child, or it died without answering
                self._status = gates.lint_status(self.head)
        return self._status


def _receive(conn: Connection) -> gates.CheckStatus | None:
    try:
        got = conn.recv()
    except (EOFError, OSError):
        return None
    return got if isinstance(got, gates.CheckStatus) else None


def _lint_child(head: Build, send: Connection) -> None:
    send.send(gates.lint_status(head))
    send.close()
