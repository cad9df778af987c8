"""JSON-RPC batches (2025-03-26) are bounded as a whole: size, replies and run time.

A 16 MiB batch line used to cost 89 s, 3.5 GB and a 500 MB reply. Now a batch holds at
most MAX_BATCH messages, its replies stop growing at BATCH_REPLY_BYTES (further requests
get a short -32603 each) and so does its run time at the batch's time budget.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import git
from serve_helpers import RawClient, check_message

from promptops.pipeline.build import Build
from promptops.pipeline.bundle import serialise
from promptops.serve.connection import Connection as Server

REV = "2025-03-26"
MAX_BATCH = 100  # the documented bounds (docs/serve.md, SECURITY.md)
BATCH_REPLY_BYTES = 16 * 1024 * 1024
BIG = "x" * 1_000_000  # one text resource of 1 MB
PACKAGE: dict[str, str | bytes] = {
    "promptops.yaml": "name: batchy\nversion: 1.0.0\n",
    "prompts/big.prompt.yaml": (
        "messages:\n  - role: user\n"
        "    resource: {uri: \"promptops://batchy/notes/big.md\", file: notes/big.md}\n"),
    "prompts/slow.prompt.yaml": (
        "messages:\n  - role: user\n    text: \"{% set s = 'x' * 1000000 %}"
        "{% for a in s %}{% for b in s %}{% endfor %}{% endfor %}\"\n"),
    "notes/big.md": BIG,
}
URI = "promptops://batchy/notes/big.md"


def _bundle(repo_factory: Callable[..., git.Repo], tmp_path: Path) -> tuple[Path, Any]:
    root = Path(repo_factory(PACKAGE).working_tree_dir or ".")
    bundle = Build(root, "HEAD").bundle
    path = tmp_path / "batchy.bundle.json"
    path.write_bytes(serialise(bundle))
    return path, bundle


def _ping(i: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": i, "method": "ping"}


def test_batch_size_is_bounded(repo_factory: Callable[..., git.Repo], tmp_path: Path) -> None:
    path, _ = _bundle(repo_factory, tmp_path)
    c = RawClient(["--bundle", str(path)], REV)
    try:
        c.initialize(REV)
        c.send([_ping(i) for i in range(MAX_BATCH)])
        assert [r["id"] for r in c.recv()] == list(range(MAX_BATCH))
        c.send([_ping(i) for i in range(MAX_BATCH + 1)])
        err = c.recv()
        assert isinstance(err, dict) and err["error"]["code"] == -32600
        assert f"limit of {MAX_BATCH}" in err["error"]["message"] and err["id"] is None
        # the 16 MiB batch of the report: refused in one short reply, not parsed into dicts
        c.write(b"[" + b'{"jsonrpc":"2.0","method":"x"},' * 500_000 + b"{}]\n")
        assert c.recv(timeout=60)["error"]["code"] in (-32600, -32700)
        assert c.request("ping")["result"] == {}
    finally:
        rc, err_text = c.close()
    assert rc == 0 and "Traceback" not in err_text


def test_batch_replies_are_bounded(repo_factory: Callable[..., git.Repo],
                                   tmp_path: Path) -> None:
    path, _ = _bundle(repo_factory, tmp_path)
    c = RawClient(["--bundle", str(path)], REV)
    try:
        c.initialize(REV)
        reads = [{"jsonrpc": "2.0", "id": i, "method": "resources/read", "params": {"uri": URI}}
                 for i in range(60)]  # 60 MB of replies if nothing stopped them
        c.send(reads)
        assert c.proc.stdout is not None
        batch = c.recv(timeout=60)
        assert [r["id"] for r in batch] == list(range(60))  # one reply for each, in order
        full = [r for r in batch if "result" in r]
        dropped = [r for r in batch if "error" in r]
        assert full and dropped and batch.index(dropped[0]) == len(full)
        assert all(r["result"]["contents"][0]["text"] == BIG for r in full)
        assert all(r["error"]["code"] == -32603 and "budget" in r["error"]["message"]
                   for r in dropped)
        assert len(json.dumps(batch, separators=(",", ":"))) <= BATCH_REPLY_BYTES
    finally:
        rc, _ = c.close()
    assert rc == 0


def test_batch_run_time_is_bounded(repo_factory: Callable[..., git.Repo],
                                   tmp_path: Path) -> None:
    _, bundle = _bundle(repo_factory, tmp_path)
    server = Server([bundle], send=lambda m: None, batch_seconds=0.5)
    server.handle({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                   "params": {"protocolVersion": REV, "capabilities": {}}})
    slow = [{"jsonrpc": "2.0", "id": i, "method": "prompts/get", "params": {"name": "slow"}}
            for i in range(20)]  # each runs into the 2 s render deadline: 40 s in all
    note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    [batch] = server.handle([*slow, note, _ping(99), {"jsonrpc": "2.0", "id": 98}])
    check_message(batch, REV, None)
    assert [r["id"] for r in batch] == [*range(20), 99, 98]
    assert batch[0]["error"]["code"] == -32603 and "longer than" in batch[0]["error"]["message"]
    assert all(r["error"]["code"] == -32603 and "not run" in r["error"]["message"]
               for r in batch[1:21])  # one render ran, not twenty: then nothing else runs
    assert batch[21]["error"]["code"] == -32600  # not a request: answered as usual
