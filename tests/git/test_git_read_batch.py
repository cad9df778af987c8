"""``objects.read_batch``: many blobs through one ``git cat-file --batch``, read off its pipe.

Each blob is read straight off git's output (issue 26 session 20); what it gives must be
every blob's exact bytes however large the output (far more than a pipe holds, while git
still has ids to read: they come from a file, so neither side waits on the other), and a
blob the output stops in is left out, never handed back short.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from helpers.repo import make_repo

from promptops.git.objects import blob_id, read_batch


def _ids(root: Path, files: dict[str, bytes]) -> dict[str, bytes]:
    """blob id -> bytes of ``files``, each written to git's object store."""
    out = {}
    for data in files.values():
        sha = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=root, input=data,
                             capture_output=True, check=True).stdout.decode().strip()
        assert sha == blob_id(data)
        out[sha] = data
    return out


def test_every_blob_exactly_through_far_more_than_a_pipe_holds(tmp_path: Path) -> None:
    make_repo(tmp_path, {"promptops.yaml": "name: p\n"})
    files = {f"f{i}": (b"line %d\n" % i) * (3000 + 997 * i) + b"\0\n\xff" for i in range(40)}
    files["empty"] = b""
    blobs = _ids(tmp_path, files)
    missing = "0" * 40
    got = read_batch(str(tmp_path / ".git"), {*blobs, missing})
    assert sum(map(len, got.values())) > 4 << 20  # many pipes' worth
    assert got == blobs  # the missing one left out, the empty one read


def test_a_blob_the_output_stops_in_is_left_out(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A git that dies mid-object: the blobs before it are read, the cut one is not
    returned short (a caller reading it alone then says what is wrong)."""
    whole, cut = "a" * 40, "b" * 40
    fake = tmp_path / "git"
    fake.write_text("#!/bin/sh\ncat >/dev/null\n"
                    f"printf '{whole} blob 3\\nabc\\n{cut} blob 10\\nabc'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PROMPTOPS_GIT", str(fake))
    assert read_batch(str(tmp_path), {whole, cut}) == {whole: b"abc"}
