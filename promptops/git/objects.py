"""Git objects: the files of a tree and their bytes, read through pipes to ``git``.

A build reads every file of a commit. GitPython reads one object per round trip to its
``cat-file`` process, which on a 10,000-prompt package costs seconds; here the whole tree
is listed by one ``ls-tree`` and the small blobs come back from one ``cat-file --batch``.
:func:`blob_id` names content the way git does, so a working-tree file and a committed
one with the same bytes have the same id (lint's cache and the per-file memo key on it).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO, NamedTuple

from promptops.errors import GitError
from promptops.git import executable

if TYPE_CHECKING:
    from git.cmd import Git

BATCH_LIMIT = 1 << 20  # blobs up to 1 MiB are read together, larger ones one by one

def blob_id(data: bytes) -> str:
    """The id git gives ``data`` as a blob: ``sha1("blob <size>\\0" + data)``."""
    digest = hashlib.sha1(b"blob %d\0" % len(data))
    digest.update(data)  # not ``header + data``: a copy of every file hashed, for nothing
    return digest.hexdigest()


class Entry(NamedTuple):
    """One file of a tree: its mode (``0o120000`` for a symlink), blob id and size. A
    named tuple: 100,000 of them are made per listing (a frozen dataclass cost 1 s)."""

    mode: int
    sha: str
    size: int


def list_tree(git: Git, tree: str) -> dict[str, Entry]:
    """Every blob below ``tree`` by path (``ls-tree -r -l``); submodules are skipped.

    ``git`` is a GitPython ``repo.git``: a missing or damaged tree raises its
    GitCommandError, which the caller words (see ``history.git_read``).
    """
    raw: bytes = git.ls_tree("-r", "-l", "-z", tree, stdout_as_string=False)
    entries: dict[str, Entry] = {}
    for record in raw.decode("utf-8", "surrogateescape").split("\0"):
        head, _, name = record.partition("\t")
        fields = head.split()
        if len(fields) != 4 or fields[1] != "blob":
            continue  # submodules (commit entries) are not files
        size = int(fields[3]) if fields[3].isdigit() else 0  # "BAD": a missing blob
        entries[name] = Entry(int(fields[0], 8), fields[2], size)
    return entries


def read_batch(git_dir: str, shas: set[str]) -> dict[str, bytes]:
    """The bytes of many blobs through one ``git cat-file --batch``; a missing one is
    left out (reading it alone then says what is wrong), as is one the output stops in.

    Each blob is read off the pipe into its own bytes, once: collecting the whole output
    and slicing it copied every byte twice more (183 MB each at 10,000 real prompts, most
    of it page faults: issue 26 session 20). The ids come from a file, not a pipe, so git
    is never blocked on its stdin while this reads its stdout, nor the other way round,
    and no thread or poll loop feeds it."""
    if not shas:
        return {}
    with _ids_file(sorted(shas)) as ids:
        proc = subprocess.Popen([executable(), "cat-file", "--batch"], cwd=git_dir,
                                stdin=ids, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL)
    blobs: dict[str, bytes] = {}
    with proc:
        out = proc.stdout
        assert out is not None  # (stdout=PIPE)
        while header := out.readline().split():
            if len(header) != 3:  # "<sha> missing"
                continue
            size = int(header[2])
            data = out.read(size)
            if len(data) != size or out.read(1) != b"\n":  # git stopped mid-object
                break
            blobs[header[0].decode()] = data
        out.read()  # (the rest, if any: git is not left blocked on a full pipe)
    return blobs


def _ids_file(shas: list[str]) -> BinaryIO:
    """A file holding ``shas`` a line each, at its start, for a child's stdin: an
    anonymous memory file on Linux (``memfd_create``), a temporary file elsewhere."""
    data = "".join(f"{sha}\n" for sha in shas).encode()
    if hasattr(os, "memfd_create"):
        fh: BinaryIO = open(os.memfd_create("promptops-ids"), "w+b")  # noqa: SIM115
    else:  # (imported here: tempfile is no small import, and Linux never needs it)
        import tempfile

        fh = tempfile.TemporaryFile()  # noqa: SIM115
    fh.write(data)
    fh.seek(0)
    return fh


def read_blob(git: Git, path: str, sha: str) -> bytes:
    """One blob's bytes; GitError naming the file when the object cannot be read."""
    try:
        data = git.cat_file("blob", sha, stdout_as_string=False, strip_newline_in_stdout=False)
    except Exception as exc:  # a missing object (shallow or broken clone)
        raise GitError(
            f"cannot read {path} ({sha[:12]}) from git: the object is missing or "
            "damaged (a partial or broken clone; `git fsck` lists what is wrong)"
        ) from exc
    return bytes(data)


@dataclass(frozen=True)
class Change:
    """One path that differs between two trees (``diff-tree -r``): its modes and blob ids
    before and after (mode 0 and a null id on the side where it does not exist)."""

    path: str
    old_mode: int
    new_mode: int
    old_sha: str
    new_sha: str


def diff_trees(git_dir: str, old: str, new: str) -> list[Change]:
    """Every file that differs between trees ``old`` and ``new``, through one
    ``git diff-tree``: git walks only the subtrees whose ids differ, so the cost follows
    the change, not the size of the trees (serve's incremental rebuild). GitError when
    either tree cannot be read."""
    proc = subprocess.run(
        [executable(), "diff-tree", "-r", "-z", "--no-renames", "--no-ext-diff", old, new],
        cwd=git_dir, capture_output=True, check=False)
    if proc.returncode != 0:
        raise GitError(f"cannot compare trees {old[:12]} and {new[:12]}: "
                       f"{proc.stderr.decode(errors='replace').strip()}")
    fields = proc.stdout.split(b"\0")
    changes: list[Change] = []
    for i in range(0, len(fields) - 1, 2):
        head, name = fields[i].split(), fields[i + 1]
        if len(head) != 5 or not head[0].startswith(b":"):
            raise GitError(f"unexpected git diff-tree output: {fields[i][:80]!r}")
        changes.append(Change(name.decode("utf-8", "surrogateescape"), int(head[0][1:], 8),
                              int(head[1], 8), head[2].decode(), head[3].decode()))
    return changes
