"""The first build of a large review validated on both cores.

A review's first build (HEAD's; BASE's then comes mostly from the shared memo) validates
every prompt file: reading its YAML, checking it against the model and parsing its
templates. That was the longest stretch of a review on one core, nothing else can run
before it (lint, the bundles and the renders all need a built package), and it is made of
independent per-file work whose results the build keeps in the caller's
:class:`~promptops.pipeline.memo.FileMemo` by content.

So before the build, a forked child validates every other prompt file into a memo of its
own while this process validates the rest into the review's; the child sends back what it
kept (the parsed file and its model by content key, each template's references by source:
a few hundred bytes a file, pickled) and this process adds it to the review's memo. The
build that follows finds every sound file in the memo and validates the package as
before: the problems, the package and the bundle are what they were, because a file the
child could not validate was not kept, and the build validates it here, positioned as
ever. The child's template ASTs stay in the child: lint parses those templates again,
on its own core, when it inspects them.

Only on Linux (fork: the child starts with the files already read, nothing is sent to it),
with a second core, and from :data:`WARM_PROMPTS` prompt files; a child that fails or
dies costs only its half, which the build then validates here.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from typing import TYPE_CHECKING

from promptops.pipeline.memo import FileMemo, PromptKey, Ref
from promptops.pipeline.templates import TemplateIndex
from promptops.pipeline.validate import is_prompt_file, validate_some

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

    from promptops.pipeline.model import PromptFile
    from promptops.pipeline.source import CachingSource
    from promptops.pipeline.yamlio.loader import LoadedFile

WARM_PROMPTS = 500  # below this a fork and the pickling cost more than half the files

_Kept = tuple[list[tuple[PromptKey, "LoadedFile", "PromptFile"]], list[tuple[str, tuple[Ref, ...]]]]


class _Recording(FileMemo):
    """A memo that also lists what it keeps, in order, to be sent to the parent."""

    def __init__(self) -> None:
        super().__init__()
        self.kept_prompts: list[tuple[PromptKey, LoadedFile, PromptFile]] = []
        self.kept_refs: list[tuple[str, tuple[Ref, ...]]] = []

    def keep_prompt(self, key: PromptKey, loaded: LoadedFile, spec: PromptFile) -> None:
        super().keep_prompt(key, loaded, spec)
        self.kept_prompts.append((key, loaded, spec))

    def keep_references(self, source: str, refs: tuple[Ref, ...]) -> None:
        super().keep_references(source, refs)
        self.kept_refs.append((source, refs))


def _forks() -> bool:
    # Linux only, as review/early.py: macOS's system libraries are not fork-safe
    return (sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods()
            and (os.cpu_count() or 1) > 1)


def prevalidate(source: CachingSource, index: TemplateIndex) -> None:
    """Fill ``index.memo`` with every sound prompt file of ``source`` (and its templates'
    references), half of them validated by a forked child; nothing when the package is
    small or this platform does not fork."""
    files = [p for p in source.files() if is_prompt_file(p)]
    if not WARM_PROMPTS <= len(files) < index.memo.max_entries // 2 or not _forks():
        return  # (a memo too small for both halves is emptied as it fills: no gain)
    source.prefetch()  # the files read once, here, before the fork: the child reads none
    source.read_ahead(files)
    for stream in (sys.stdout, sys.stderr):  # a fork's exit flushes its copy again
        stream.flush()
    ctx = multiprocessing.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_child, args=(source, files[1::2], send), daemon=True)
    child.start()
    send.close()
    try:
        validate_some(source, files[0::2], [], memo=index.memo, index=index)
        kept = _receive(receive)
    finally:
        receive.close()
        child.join()
    if kept is not None:
        prompts, refs = kept
        for key, loaded, spec in prompts:
            index.memo.keep_prompt(key, loaded, spec)
        for text, found in refs:
            index.memo.keep_references(text, found)


def _receive(conn: Connection) -> _Kept | None:
    try:
        got = conn.recv()
    except (EOFError, OSError):
        return None
    return got if isinstance(got, tuple) and len(got) == 2 else None


def _child(source: CachingSource, paths: list[str], send: Connection) -> None:
    memo = _Recording()
    try:
        validate_some(source, paths, [], memo=memo, index=TemplateIndex(memo))
    except Exception:  # the build validates these files again, and says what is wrong
        send.send(None)
    else:
        send.send((memo.kept_prompts, memo.kept_refs))
    send.close()
