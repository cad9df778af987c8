"""A working tree's prefetch (``CachingSource.prefetch``) reads each plain file with one
open, ``fstat`` and read (``fsutil.plain_bytes``), not an ``lstat`` and a buffered reader
first: it reads every file of a package on one core before a review's first fork. What it
reads is what it read before: regular files only, never through a symlink, never
blocking on a FIFO; anything else is left to the working tree's own checked read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from promptops.fsutil import plain_bytes
from promptops.pipeline.source import CachingSource, WorktreeSource


def test_plain_bytes_reads_regular_files_only(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"alpha\n")
    (tmp_path / "empty").write_bytes(b"")
    (tmp_path / "big").write_bytes(b"x" * 3_000_000)
    (tmp_path / "link").symlink_to(tmp_path / "a.txt")
    (tmp_path / "folder").mkdir()
    os.mkfifo(tmp_path / "fifo")
    assert plain_bytes(str(tmp_path / "a.txt")) == b"alpha\n"
    assert plain_bytes(str(tmp_path / "empty")) == b""
    assert plain_bytes(str(tmp_path / "big")) == b"x" * 3_000_000
    for other in ("folder", "fifo"):  # (the FIFO's open does not block)
        assert plain_bytes(str(tmp_path / other)) is None
    with pytest.raises(OSError):  # a symlink is refused at the open
        plain_bytes(str(tmp_path / "link"))
    with pytest.raises(FileNotFoundError):
        plain_bytes(str(tmp_path / "missing"))


def test_prefetch_asks_no_lstat(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every regular file held after one open each; the symlink and the FIFO left to the
    working tree's read (which still refuses the FIFO and reads the link's target)."""
    (tmp_path / "prompts").mkdir()
    files = {f"prompts/p{n}.prompt.yaml": f"description: P{n}\n".encode() for n in range(4)}
    for rel, data in files.items():
        (tmp_path / rel).write_bytes(data)
    (tmp_path / "prompts" / "link.yaml").symlink_to(tmp_path / "prompts" / "p0.prompt.yaml")
    os.mkfifo(tmp_path / "prompts" / "fifo")
    source = CachingSource(WorktreeSource(tmp_path))
    source.files()  # (the walk's own calls)

    def refused(*args: object, **kwargs: object) -> os.stat_result:
        raise AssertionError("lstat asked")

    monkeypatch.setattr(os, "lstat", refused)
    source.prefetch()
    monkeypatch.undo()
    assert {p for p in source.files() if source._data.get(p) is not None} == set(files)
    assert all(source.read(p) == data for p, data in files.items())
    assert source.read("prompts/link.yaml") == files["prompts/p0.prompt.yaml"]
    with pytest.raises(FileNotFoundError):
        source.read("prompts/fifo")
