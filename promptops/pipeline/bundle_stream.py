"""A bundle file written as it is compiled, its hashing and writing on the second core.

Writing the bundle of 10,000 real prompts (185 MB: speed2's tuning part) was three serial
steps in one thread after the prompts were encoded: sha256 over every part (0.16 s), the
parts joined into the file's bytes (a fresh 185 MB: 0.1-0.25 s, most of it page faults),
and the write (the kernel's copy into 185 MB of fresh page cache: 0.1-0.5 s of system
time). The first and last release the GIL, and the forked child of validation
(:mod:`promptops.pipeline.prefetch`) is gone by then, so the second core was idle (issue
26 item 1, session 14). Here the prompts are compiled and encoded in this thread
(:func:`~promptops.pipeline.bundle.compile_parts`: json and ``bytes.replace`` hold the
GIL) while a writer thread hashes each batch of parts and writes it in place
(``pwritev``), and nothing joins them: the file's first member is the digest of the rest
(``digest`` sorts first), and it has one length (:data:`HEADER`), so the body is written
after that room and the digest into it once the body is hashed.

The bytes are those of :func:`~promptops.pipeline.bundle.serialise`, and the file is
written as ``write_bundle`` writes it (``fsutil.atomic_write``: the old file or the new,
never part of one). Only where no file is there to compare with: an existing one is
compared whole, as ``write_bundle`` does, so such a write is made the old way. The thread
ends before :func:`write_streamed` returns (a fork needs a process of one thread:
``prefetch.forkable``), also when compiling fails (its exception is raised) or the write
fails (its ``OSError``, which ``atomic_write`` reports as a ``WriteError``).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from promptops.pipeline.bundle import (
    compile_parts,
    digest_of_body,
    existing_bundle,
    file_name,
    put_bundle,
    serialised_from_body,
)

if TYPE_CHECKING:
    from promptops.pipeline.bundle_types import Bundle
    from promptops.pipeline.validate import Package

# ``{"digest":"sha256:<64 hex digits>",``: the file's bytes before the body's second part
HEADER = len(b'{"digest":"sha256:' + b"0" * 64 + b'",')
BATCH = 4 << 20  # bytes of parts handed to the writer at once (see _Writer)
QUEUED = 4  # batches waiting for the writer at most: memory stays a few of them


def write_streamed(package: Package, out_dir: Path, *, force: bool, root: Path | None
                   ) -> tuple[Bundle, Path, bool]:
    """``write_bundle(compile_bundle(package), out_dir, ...)``: (the bundle, its path,
    whether it was written), the same bytes at the same path, the body hashed and written
    while it is encoded where no file is at the path (and ``pwritev`` is there)."""
    bundle, parts = compile_parts(package)
    path = out_dir / file_name(bundle)
    existing = existing_bundle(path, root)
    if existing is not None or not hasattr(os, "pwritev"):
        body = list(parts)
        bundle["digest"] = digest_of_body(body)
        data = serialised_from_body(body, bundle["digest"])
        return bundle, path, put_bundle(path, data, existing, force=force, root=root)
    fill = _Fill(package, bundle, parts)
    put_bundle(path, fill, None, force=force, root=root)
    return fill.bundle, path, True


class _Fill:
    """Writes the bundle file into the file ``atomic_write`` opened; ``bundle`` has its
    digest once it did. Called again (a temp file that could not be linked is written
    again by name) it compiles the package again: the parts are made only once."""

    def __init__(self, package: Package, bundle: Bundle, parts: Iterator[bytes]) -> None:
        self._package = package
        self.bundle = bundle
        self._parts: Iterator[bytes] | None = parts

    def __call__(self, fh: BinaryIO) -> None:
        parts, self._parts = self._parts, None
        if parts is None:
            self.bundle, parts = compile_parts(self._package)
        fh.flush()
        fd = fh.fileno()
        sha = hashlib.sha256(next(parts))  # b"{": in the file, the digest's member stands there
        writer = _Writer(fd, sha)
        try:
            batch: list[bytes] = []
            size = 0
            for part in parts:
                batch.append(part)
                size += len(part)
                if size >= BATCH:
                    writer.put(batch)
                    batch, size = [], 0
            batch.append(b"\n")  # not hashed: serialise's end of file
            writer.put(batch, last=1)
        finally:
            writer.close()  # raises what the writer met
        self.bundle["digest"] = digest = "sha256:" + sha.hexdigest()
        header = b'{"digest":"%s",' % digest.encode()
        assert len(header) == HEADER
        _write_at(fd, [header], 0)


class _Writer:
    """A thread that hashes batches of parts into ``sha`` and writes them one after the
    other from :data:`HEADER` on; :meth:`close` waits for it and raises what it met.

    A batch is joined, hashed and written by three calls that each release the GIL, and
    it is large (:data:`BATCH`): a thread that wants the GIL back from one encoding
    prompts waits up to the switch interval (5 ms), so per part (thousands of long texts
    at 10,000 prompts) it would spend more time waiting than writing."""

    def __init__(self, fd: int, sha: hashlib._Hash) -> None:
        import queue
        import threading

        self._fd = fd
        self._sha = sha
        self._at = HEADER
        self._failed: BaseException | None = None
        self._queue: queue.Queue[tuple[list[bytes], int] | None] = queue.Queue(QUEUED)
        self._thread = threading.Thread(target=self._run, name="promptops-bundle-writer",
                                        daemon=True)
        self._thread.start()

    def put(self, batch: list[bytes], *, last: int = 0) -> None:
        """Hash and write ``batch``, but its ``last`` parts are written only."""
        if self._failed is None:  # a failed writer drops the rest: close raises
            self._queue.put((batch, last))

    def close(self) -> None:
        """Wait for every batch to be written."""
        self._queue.put(None)
        self._thread.join()
        if self._failed is not None:
            raise self._failed

    def _run(self) -> None:
        while (got := self._queue.get()) is not None:
            if self._failed is not None:
                continue
            batch, last = got
            try:
                hashed = b"".join(batch[:len(batch) - last])  # (the GIL released from 1 MB)
                self._sha.update(hashed)  # (and from 2 KB)
                self._at = _write_at(self._fd, [hashed, *batch[len(batch) - last:]],
                                     self._at)
            except BaseException as exc:  # raised by close, in the caller
                self._failed = exc


def _write_at(fd: int, batch: list[bytes], at: int) -> int:
    """``batch`` written at ``at`` in ``fd``, however many calls it takes; where it ends."""
    total = sum(map(len, batch))
    done = os.pwritev(fd, batch, at)
    if done < total:  # a short write (a signal): the rest
        rest = memoryview(b"".join(batch))
        while done < total:
            done += os.pwrite(fd, rest[done:], at + done)
    return at + total
