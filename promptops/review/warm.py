"""The first build of a large review validated on both cores.

A review's first build (HEAD's; BASE's then comes mostly from the shared memo) validates
every prompt file: reading its YAML, checking it against the model and parsing its
templates. That was the longest stretch of a review on one core, nothing else can run
before it (lint, the bundles and the renders all need a built package), and it is made of
independent per-file work whose results the build keeps in the caller's
:class:`~promptops.pipeline.memo.FileMemo` by content.

So before the build, a forked child validates prompt files into a memo of its own while
this process validates others into the review's. Neither has a fixed half: the files are
cut into parts by bytes (real prompts range from 200 bytes to 200 KB), large first and
small last, and each process takes the next part left (a pipe of part numbers, read a
record at a time, as make's jobserver deals its tokens) until none is left. A fixed split
was right for one shape only: this process also keeps every template's tree for the lint
gate (dearer where includes nest), the child also pickles, and a loaded core slows either;
the process that ended first then waited for the other. After each part the child pickles
what its memo gained (:meth:`~promptops.pipeline.memo.FileMemo.entries`: the parsed file
and its model by content key, each template's references by source) into a file, without
the files' bytes, which this process holds (:func:`~promptops.pipeline.prefetch.sendable`),
and sends a notice of where it ends; this process reads and unpickles those between its
own parts and after them, while the child still validates, so what is left when the child
ends is its last small part's pickle (a pipe of pickles would have held the child up
while this process was busy, and all the unpickling came after both halves). The child's
entries go into the review's memo after this process's own, with the blob ids the child
hashed, so the build that follows hashes no file again. That build finds every sound file
in the memo and validates the package as before: the problems, the package and the bundle
are what they were, because a file the child could not validate was not kept, and the
build validates it here, positioned as ever. The child keeps no template ASTs (a template
of a layout it has seen gives its references without one:
:meth:`~promptops.pipeline.astshapes.AstShapes.known_references`): lint parses those
templates on its own core when it inspects them.

The fork is the build's and lint's (:class:`promptops.pipeline.prefetch.Forked`: the child
leaves by ``os._exit``). The child's validation must not fork
again: its index is ``one_core``, which the build's chunked validation reads as "do not
fork" (:mod:`promptops.pipeline.prefetch`); a grandchild validating a quarter of the files
cost a second fork and a second pickling of its half for no core left to run on.

Only on Linux (fork: the child starts with the files already read, nothing is sent to it),
with a second core, and from :data:`WARM_PROMPTS` prompt files; a child that fails or
dies costs only the parts it took and had not sent, which the build then validates here.
"""

from __future__ import annotations

import os
import pickle
import struct
import sys
from itertools import islice
from typing import TYPE_CHECKING

from promptops.pipeline.memo import FileMemo
from promptops.pipeline.prefetch import Forked, received, sendable
from promptops.pipeline.templates import TemplateIndex
from promptops.pipeline.validate import is_prompt_file, validate_some
from promptops.review.early import forks

if TYPE_CHECKING:
    from promptops.pipeline.prefetch import Entries
    from promptops.pipeline.source import CachingSource

WARM_PROMPTS = 500  # below this a fork and the pickling cost more than half the files
# The parts either process takes next (guided, as OpenMP's schedule): a quarter of the bytes
# not yet in a part, so the first parts are large (few pickles, few claims) and the last
# ones small (the process that ends first waits at most one small part for the other);
# never under 1/SMALLEST of all the bytes (each part is a claim, a pickle and a notice).
SMALLEST = 64
_PART = struct.Struct("=I")  # a part's number in the queue
_END = struct.Struct("=Q")  # a notice: where the child's pickles end in the log now


def prevalidate(source: CachingSource, index: TemplateIndex) -> None:
    """Fill ``index.memo`` with every sound prompt file of ``source`` (and its templates'
    references), part of them validated by a forked child; nothing when the package is
    small or this platform does not fork."""
    files = [p for p in source.files() if is_prompt_file(p)]
    if (not WARM_PROMPTS <= len(files) < index.memo.max_entries // 2 or not forks()
            or not hasattr(os, "memfd_create")):  # (Linux from 3.17, glibc from 2.27)
        return  # (a memo too small for both halves is emptied as it fills: no gain)
    source.prefetch()  # the files read once, here, before the fork: the child reads none
    source.read_ahead(files)
    own = [p for p in files if not source.held(p)]  # only git still holds these: ours
    parts = _parts(source, [p for p in files if source.held(p)])
    queue, log, (notices, noticed) = _queue(len(parts)), os.memfd_create("warm"), os.pipe()
    try:
        try:
            fork = Forked(lambda: _child(source, parts, queue, log, noticed))
        finally:
            os.close(noticed)  # the child's alone: its exit ends the notices
        sent = _Sent(source, log, notices)
        try:
            part: list[str] | None = own
            while part is not None:
                validate_some(source, part, [], memo=index.memo, index=index)
                sent.read(block=False)  # the child's parts so far, while it does more
                part = _claimed(queue, parts)
            sent.read(block=True)  # ... and the rest, until it is gone
        finally:
            fork.wait()  # (its answer is only its exit: its parts came through the log)
    finally:
        for fd in (queue, log, notices):
            os.close(fd)
    for entries in sent.got:  # after this process's own: the memo's order as before
        index.memo.take(entries)


def _parts(source: CachingSource, files: list[str]) -> list[list[str]]:
    """``files`` in parts, in order, by bytes (validating a prompt file is per byte: its
    YAML, its templates; real prompts range from 200 bytes to 200 KB): each a quarter of
    the bytes left, down to :data:`SMALLEST`."""
    sizes = [len(source.read(p)) for p in files]
    left = total = sum(sizes)
    parts: list[list[str]] = []
    part: list[str] = []
    size = 0
    for path, n in zip(files, sizes, strict=True):
        part.append(path)
        size += n
        if size >= max(left / 4, total / SMALLEST, 1):  # (empty files: one part, not one each)
            parts.append(part)
            left -= size
            part, size = [], 0
    return [*parts, part] if part else parts


def _queue(parts: int) -> int:
    """A pipe's read end holding the parts' numbers: each process reads the next one it
    takes (a pipe's reader takes whole records, never one another reader took, as make's
    jobserver does), until the end it meets once every part is taken."""
    read, write = os.pipe()
    try:
        os.write(write, b"".join(_PART.pack(i) for i in range(parts)))  # (< a pipe's 64 KB)
    finally:
        os.close(write)
    return read


def _claimed(queue: int, parts: list[list[str]]) -> list[str] | None:
    """The next part no process took yet; None once all are taken."""
    got = os.read(queue, _PART.size)
    return parts[_PART.unpack(got)[0]] if len(got) == _PART.size else None


def _child(source: CachingSource, parts: list[list[str]], queue: int, log: int,
           notices: int) -> bytes:
    """The child's share: parts claimed until none is left, each one's new memo entries
    pickled into ``log`` (:func:`_delta`), and a notice of where they end down
    ``notices``. The log is a file: writing to it never waits for the parent, which
    reads it between its own parts; a pipe of pickles would hold the child up."""
    own = FileMemo(max_entries=sys.maxsize)  # positions count: nothing may be dropped
    # one_core: the child's validation does not fork a grandchild (module docstring);
    # no tree kept, so a template of a known layout makes none, only its references
    index = TemplateIndex(own, one_core=True)
    done, end = (0, 0), 0
    while (part := _claimed(queue, parts)) is not None:
        validate_some(source, part, [], memo=own, index=index)
        data, done = _delta(source, own, done)
        view = memoryview(data)
        while view:
            view = view[os.write(log, view):]
        end += len(data)
        os.write(notices, _END.pack(end))
    return b"done"


def _delta(source: CachingSource, memo: FileMemo, done: tuple[int, int]
           ) -> tuple[bytes, tuple[int, int]]:
    """The entries ``memo`` gained since it held ``done`` (prompt files, references), as
    :func:`~promptops.pipeline.prefetch.sendable` pickles them (without the files'
    bytes), and how many it holds now."""
    prompts, refs = memo.entries()
    new = (dict(islice(prompts.items(), done[0], None)), dict(islice(refs.items(), done[1], None)))
    return (pickle.dumps(sendable(source, new), protocol=pickle.HIGHEST_PROTOCOL),
            (len(prompts), len(refs)))


class _Sent:
    """The child's pickled parts, read off its log as its notices arrive."""

    def __init__(self, source: CachingSource, log: int, notices: int) -> None:
        self.source, self.log, self.notices = source, log, notices
        self.got: list[Entries] = []  # each part's entries, bytes and blob ids restored
        self._done = 0  # bytes of the log read
        self._pending = b""  # a notice read in part

    def read(self, *, block: bool) -> None:
        """Every part noticed so far; with ``block``, until the child closes its end."""
        os.set_blocking(self.notices, block)
        while True:
            try:
                got = os.read(self.notices, 1 << 16)
            except BlockingIOError:
                return
            if not got:
                return
            self._pending += got
            while len(self._pending) >= _END.size:
                end = _END.unpack(self._pending[:_END.size])[0]
                self._pending = self._pending[_END.size:]
                data = _pread(self.log, self._done, end)
                self.got.append(received(self.source, pickle.loads(data)))
                self._done = end


def _pread(fd: int, start: int, end: int) -> bytes:
    """Bytes ``start`` to ``end`` of the file ``fd`` (whole: a long read may come short)."""
    chunks: list[bytes] = []
    while start < end:
        chunk = os.pread(fd, end - start, start)
        if not chunk:
            raise EOFError("the child's log ends before its notice")
        chunks.append(chunk)
        start += len(chunk)
    return b"".join(chunks)
