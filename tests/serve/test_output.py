"""Invariant 5: every reply is written whole, also to a non-blocking pipe and a slow reader.

A client may hand the server a pipe in non-blocking mode (O_NONBLOCK lives on the open
file description, which parent and child share), so a write can be short or fail with
EAGAIN. Before, a short write lost the rest of a large reply (and the next message was
glued on) or silenced the server for good; now the rest is written once the reader has
made room.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import git
from helpers.repo import posix_only
from serve_helpers import check_message, serve_cmd

from promptops.pipeline.build import Build
from promptops.pipeline.bundle import serialise

BIG = "y" * 3_000_000  # a 3 MB reply: about 46 times a pipe's buffer
PACKAGE: dict[str, str | bytes] = {
    "promptops.yaml": "name: wide\nversion: 1.0.0\n",
    "prompts/big.prompt.yaml": (
        "messages:\n  - role: user\n"
        "    resource: {uri: \"promptops://wide/notes/big.md\", file: notes/big.md}\n"),
    "notes/big.md": BIG,
}
REV = "2025-11-25"


def _bundle(repo_factory: Callable[..., git.Repo], tmp_path: Path) -> Path:
    root = Path(repo_factory(PACKAGE).working_tree_dir or ".")
    path = tmp_path / "wide.bundle.json"
    path.write_bytes(serialise(Build(root, "HEAD").bundle))
    return path


def _requests(n: int) -> bytes:
    msgs = [{"jsonrpc": "2.0", "id": 0, "method": "initialize",
             "params": {"protocolVersion": REV, "capabilities": {}}}]
    for i in range(1, n + 1):
        msgs.append({"jsonrpc": "2.0", "id": i, "method": "resources/read",
                     "params": {"uri": "promptops://wide/notes/big.md"}})
        msgs.append({"jsonrpc": "2.0", "id": f"p{i}", "method": "ping"})
    return b"".join(json.dumps(m).encode() + b"\n" for m in msgs)


def _slow_read(fd: int, proc: subprocess.Popen[bytes]) -> bytes:
    """Read in small sips with pauses, so the server keeps finding the pipe full."""
    got = bytearray()
    while True:
        try:
            chunk = os.read(fd, 4096)
        except BlockingIOError:
            chunk = None
        if chunk == b"":
            return bytes(got)
        if chunk:
            got += chunk
        time.sleep(0.0005)


def _judge(out: bytes, n: int) -> None:
    lines = out.split(b"\n")
    assert lines[-1] == b"" and len(lines) == 2 * n + 2, [ln[:80] for ln in lines[-3:]]
    replies = [json.loads(line) for line in lines[:-1]]  # each line is one whole message
    methods = {0: "initialize", **{i: "resources/read" for i in range(1, n + 1)}}
    for r in replies:
        check_message(r, REV, methods.get(r["id"]))
    assert [r["id"] for r in replies] == [0, *[x for i in range(1, n + 1) for x in (i, f"p{i}")]]
    assert all(r["result"]["contents"][0]["text"] == BIG for r in replies[1::2])


@posix_only("os.set_blocking on pipes is POSIX-only before Python 3.12")
def test_nonblocking_stdout_with_a_slow_reader(repo_factory: Callable[..., git.Repo],
                                               tmp_path: Path) -> None:
    path = _bundle(repo_factory, tmp_path)
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)  # the server's stdout: short writes and EAGAIN
    proc = subprocess.Popen(serve_cmd("--bundle", str(path)), stdin=subprocess.PIPE,
                            stdout=write_end, stderr=subprocess.PIPE)
    os.close(write_end)
    assert proc.stdin is not None and proc.stderr is not None
    proc.stdin.write(_requests(4))
    proc.stdin.close()
    out = _slow_read(read_end, proc)
    os.close(read_end)
    assert proc.wait(timeout=60) == 0
    assert b"Traceback" not in proc.stderr.read()
    _judge(out, 4)


def test_blocking_stdout_with_a_reader_that_pauses(repo_factory: Callable[..., git.Repo],
                                                   tmp_path: Path) -> None:
    path = _bundle(repo_factory, tmp_path)
    proc = subprocess.Popen(serve_cmd("--bundle", str(path)), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(_requests(3))
    proc.stdin.close()
    time.sleep(0.5)  # the server blocks on a full pipe meanwhile
    out = _slow_read(proc.stdout.fileno(), proc)
    assert proc.wait(timeout=60) == 0
    _judge(out, 3)
