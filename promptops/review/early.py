"""The lint gate of a large review, started as soon as HEAD validates, in a forked process.

A review of thousands of prompts spends its first seconds on one core: building both ends,
the diff engine, the test plan, the argument sets, the proof that a prompt is unaffected.
The lint gate needs only HEAD's validated package, and used to run in this process while
the render pool worked, so the second core idled through all of that and the pool then
shared two cores between three processes. Forked as soon as HEAD's package validates
(before its bundle is compiled: lint reads the package, never the bundle), lint uses the
idle core from then on; the report waits for its status (a small object sent back through
a pipe) only when it needs it.

The child is a fork (:class:`promptops.pipeline.prefetch.Forked`, the product's one
fork-and-pipe: the child leaves by ``os._exit``), so it lints the very build this process
holds (nothing is pickled but the status) and writes lint's cache exactly as an
in-process lint would. Where fork is not available (Linux only), or the package is small
(a fork costs more than linting a few hundred prompts), or the child dies without
answering, lint runs here, as before: the status is the same either way
(``tests/review/test_review_early_lint.py``).
"""

from __future__ import annotations

import os
import pickle
import sys
from typing import TYPE_CHECKING

from promptops.pipeline.prefetch import Forked
from promptops.review import gates

if TYPE_CHECKING:
    from promptops.pipeline.build import Build

EARLY_LINT_PROMPTS = 500  # below this, linting here costs less than forking for it


def forks() -> bool:
    """Linux's fork and a second core. Linux only: macOS has fork, but its system
    libraries are not fork-safe (why Python's default there is spawn), and a spawned
    child would load the package again. Threads do not matter here, unlike for
    :func:`promptops.pipeline.prefetch.forkable`: the children of a review take no lock
    a thread could hold (the progress spinner writes to the terminal only)."""
    return (sys.platform.startswith("linux") and hasattr(os, "fork")
            and (os.cpu_count() or 1) > 1)


class Lint:
    """HEAD's lint status, computed in a forked child or, failing that, here."""

    def __init__(self, head: Build | None, *, fork: bool) -> None:
        self.head = head
        self._status: gates.CheckStatus | None = None
        self._child: Forked | None = None
        if fork and head is not None:
            self._child = Forked(lambda: _lint_child(head))

    @classmethod
    def start(cls, head: Build | None, prompts: int) -> Lint:
        """Lint ``head`` early in a child when the package has enough ``prompts`` and this
        platform forks; else lazily, here, when :meth:`status` is first asked."""
        return cls(head, fork=prompts >= EARLY_LINT_PROMPTS and forks())

    @property
    def forked(self) -> bool:
        return self._child is not None

    def stop(self) -> None:
        """End the child unasked (the review does not show the gate): lint's cache
        writes are atomic, so a child stopped at any moment leaves no partial file."""
        if self._child is not None and self._status is None:
            self._child.stop()
            self._child = None

    def status(self) -> gates.CheckStatus:
        """The gate's status (waits for the child if one is linting)."""
        if self._status is None:
            if self._child is not None:
                self._status = _receive(self._child.wait())
            if self._status is None:  # no child, or it died without answering
                self._status = gates.lint_status(self.head)
        return self._status


def _receive(data: bytes | None) -> gates.CheckStatus | None:
    try:
        got = pickle.loads(data) if data is not None else None
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError):
        return None
    return got if isinstance(got, gates.CheckStatus) else None


def _lint_child(head: Build) -> bytes:
    return pickle.dumps(gates.lint_status(head), protocol=pickle.HIGHEST_PROTOCOL)
