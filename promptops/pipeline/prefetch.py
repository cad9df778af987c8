"""Prompt files validated on both cores: a forked child fills the memo for half of them.

Where no text repeats (a real corpus of 10,000 different prompts), a build is the per-file
work of validation, file after file on one core: each prompt file's YAML, its model, one
Jinja parse per template (issue 26 item 1, session 10). That work is independent per file,
and its results already have a home the validator reads first: the
:class:`~promptops.pipeline.memo.FileMemo` (a prompt file's loaded YAML and model by its
content's name, a template source's references). So :func:`chunks` hands the validator the
prompt files in chunks, and before each chunk a forked child validates every other file of
it into a memo of its own while this process does the rest the same way; the child's
entries arrive pickled and go into the caller's memo. The validator's own loop then runs
exactly as before, in the same order, and finds the files it would have parsed already
parsed: every problem, position and byte of the bundle is the one-process build's.

Only what validated is handed over (a memo keeps nothing else): a file with a problem is
validated again by the loop, which reports it. A child that fails hands over nothing and
the loop does its share. It runs only where it can pay and be safe: a POSIX ``fork``,
two cores or more for this process, no other thread alive (a fork copies locks held by
threads that do not exist in the child), enough prompt files left to validate
(:data:`MIN_FILES`: a fork and the pickles cost about a tenth of a second at 10,000), a memo
that holds the chunk's entries once they are in (:meth:`FileMemo.holds`: a full memo drops
its oldest entries, and the loop would parse again what the child sent if they were the
chunk's), and no template ASTs kept (lint's index keeps the ASTs of what
it parses, and a child's ASTs would have to be parsed again).
"""

from __future__ import annotations

import os
import pickle
import signal
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, TypeVar

from promptops.pipeline.memo import FileMemo
from promptops.pipeline.source import CachingSource, Source
from promptops.pipeline.templates import TemplateIndex

if TYPE_CHECKING:
    from promptops.pipeline.memo import PromptKey, Ref
    from promptops.pipeline.model import PromptFile
    from promptops.pipeline.yamlio.loader import LoadedFile

T = TypeVar("T")

MIN_FILES = 1_000  # prompt files to validate in a chunk before a child pays for its fork
CHUNK = 5_000  # prompt files a chunk: the memo holds a chunk's entries with room to spare
# What a byte costs the child against this process: it also pickles what it validated
# (speed2's tuning part, 2,500 prompt files: 0.74 s to validate, 0.17 s to pickle), and
# this process unpickles only after its own half, so the child's half is the smaller.
CHILD_WEIGHT = 1.25

# validates prompt files into a memo through an index, as the validator's loop would
# (``validate._warm``); problems are left to the loop
Warm = Callable[[Source, list[str], FileMemo, TemplateIndex], None]


def chunks(source: Source, paths: list[str], memo: FileMemo, index: TemplateIndex,
           todo: Callable[[str], bool], warm: Warm) -> Iterator[list[str]]:
    """``paths`` (prompt files) in chunks, ``memo`` filled for each before it is yielded
    by ``warm``; ``todo(path)``: the memo does not hold ``path`` yet."""
    for start in range(0, len(paths), CHUNK):
        chunk = paths[start:start + CHUNK]
        left = ([p for p in chunk if todo(p)]
                if isinstance(source, CachingSource) and _can_fork(index) else [])
        if len(left) >= MIN_FILES and memo.holds(3 * len(left)):
            assert isinstance(source, CachingSource)
            _both_cores(source, left, memo, index, warm)
        yield chunk


def _can_fork(index: TemplateIndex) -> bool:
    """:func:`forkable`, no ASTs kept, and not in a forked child already."""
    return not index.keep_asts and not index.one_core and forkable()


def forkable() -> bool:
    """Linux's fork (``sched_getaffinity`` is Linux's: macOS forks unsafely under some
    system libraries), two cores for this process, no other thread (lint's halves,
    :mod:`promptops.lint.halves`, fork where this says so too)."""
    return (hasattr(os, "fork") and hasattr(os, "sched_getaffinity")
            and threading.active_count() == 1 and len(os.sched_getaffinity(0)) >= 2)


def _both_cores(source: CachingSource, paths: list[str], memo: FileMemo,
                index: TemplateIndex, warm: Warm) -> None:
    """Part of ``paths`` (:func:`halves`) in a forked child, the rest here, into ``memo``."""

    mine, theirs = halves(source, paths)

    def child() -> bytes:
        own = FileMemo()  # keeps the parsed YAML: the caller's memo decides on shedding
        warm(source, theirs, own, TemplateIndex(own))
        return pickle.dumps(sendable(source, own.entries()), protocol=pickle.HIGHEST_PROTOCOL)

    _, data = forked(child, lambda: warm(source, mine, memo, index))
    if data is not None:
        memo.take(received(source, pickle.loads(data)))


if TYPE_CHECKING:  # a memo's entries (FileMemo.entries)
    Entries = tuple[dict[PromptKey, tuple[LoadedFile, PromptFile]], dict[str, tuple[Ref, ...]]]


def sendable(source: Source, entries: Entries) -> tuple[Entries, list[PromptKey]]:
    """A child's memo entries (``FileMemo.entries``) to pickle, and the keys of those whose
    bytes stay behind: the parent holds every file's bytes (where no text repeats, a copy
    of each file down the pipe and out of the pickle was a third of it). :func:`received`
    puts them back."""
    return entries, [key for key, (loaded, _) in entries[0].items()
                     if loaded.drop_bytes(source.read(key[1]))]


def received(source: Source, sent: tuple[Entries, list[PromptKey]]) -> Entries:
    """What :func:`sendable` gave, unpickled here, with the bytes it left behind; a
    caching source keeps the blob ids the child hashed them to (a working tree's memo
    keys), so the build that reads the memo next does not hash them again."""
    entries, dropped = sent
    caching = source if isinstance(source, CachingSource) else None
    for key in dropped:
        path, sha = key[1], key[2]
        if caching is not None and isinstance(sha, str):  # (before read: held at the fork)
            caching.remember_id(path, sha)
        entries[0][key][0].restore_bytes(source.read(path))
    return entries


def halves(source: CachingSource, paths: list[str], *, weight: float = CHILD_WEIGHT,
           per_file: int = 0) -> tuple[list[str], list[str]]:
    """``paths`` as (this process's, the child's), in order, balanced by bytes: validating
    a prompt file is per byte (its YAML, its templates), and real prompts range from 200
    bytes to 200 KB, so every other file could leave one core waiting on the other. Each
    file goes to the side with less work once it is counted, a file costing its bytes and
    ``per_file`` more (what a file costs whatever its size, in bytes: lint's rules loop
    over prompts, :data:`promptops.lint.halves.PER_PROMPT`), the child's weighing
    ``weight`` (it also pickles what it computed: :data:`CHILD_WEIGHT` for the build's);
    a file only git can still give (a large blob) is this process's (the child must not
    talk to its parent's git processes). The one split of a half's share, the build's and
    lint's (:mod:`promptops.lint.halves`)."""
    mine: list[str] = []
    theirs: list[str] = []
    here = there = 0.0
    for path in paths:
        if not source.held(path):
            mine.append(path)
            continue
        cost = len(source.read(path)) + per_file
        if there + weight * cost < here + cost:
            theirs.append(path)
            there += weight * cost
        else:
            mine.append(path)
            here += cost
    return mine, theirs


def forked(child: Callable[[], bytes | memoryview],
           here: Callable[[], T]) -> tuple[T, bytes | None]:
    """``child()`` in a forked child, its bytes down a pipe, while ``here()`` runs in this
    process: (what ``here`` returned, the child's bytes or None when it failed or sent
    nothing). The pipe is read once ``here`` is done (the child waits on a full pipe
    meanwhile, as a writer does)."""
    fork = Forked(child)
    try:
        got = here()
    finally:
        sent = fork.wait()
    return got, sent


class Forked:
    """``child()`` running in a forked child from construction, its bytes read when
    :meth:`wait` asks for them. The one fork-and-pipe of the product: the build's and
    lint's halves (:func:`forked`, :mod:`promptops.lint.halves`), the review's first
    validation (:mod:`promptops.review.warm`) and its lint gate
    (:mod:`promptops.review.early`). The child leaves by ``os._exit`` (no atexit
    handlers, no flushing of this process's buffers, no collection of the heap it
    inherited), and nothing is sent to it: it starts with what this process holds."""

    def __init__(self, child: Callable[[], bytes | memoryview]) -> None:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: its share, down the pipe, then gone at once
            code = 1
            try:
                os.close(read)
                data = child()
                with os.fdopen(write, "wb") as pipe:
                    pipe.write(data)
                code = 0
            finally:
                os._exit(code)
        os.close(write)
        self._read: int | None = read
        self._pid = pid

    def wait(self) -> bytes | None:
        """The child's bytes, once it is done; None when it failed, sent nothing, or was
        stopped. Read once: later calls give None."""
        if self._read is None:
            return None
        with os.fdopen(self._read, "rb") as pipe:
            self._read = None
            sent = pipe.read()
        _, status = os.waitpid(self._pid, 0)
        return sent if status == 0 and sent else None

    def stop(self) -> None:
        """End the child unasked and reap it (its answer is not wanted any more)."""
        if self._read is None:
            return
        os.close(self._read)
        self._read = None
        os.kill(self._pid, signal.SIGTERM)  # (an ended child is a zombie until reaped)
        os.waitpid(self._pid, 0)
