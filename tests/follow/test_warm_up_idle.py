"""A stdio server's follower warms up only once its client is idle (follow.WARM_IDLE_S):
run while the first requests were answered, the warm-up held the GIL they waited for (the
first page of prompts/list at 100,000 prompts, docs/benchmarks.md "Growth, session 9")."""

from __future__ import annotations

import gc
import os
import threading
import time
from pathlib import Path

import pytest
from helpers.repo import make_repo

from promptops.pipeline.rebuild import Built
from promptops.serve import follow
from promptops.serve.follow import Follower
from promptops.serve.transports import stdio
from promptops.serve.transports.stdio import Output

FILES = {
    "pkg/promptops.yaml": "name: demo\nversion: 1.0.0\n",
    "pkg/prompts/alpha.prompt.yaml": ("description: a\nmessages:\n  - role: user\n"
                                      "    text: Hello\n"),
}


def test_the_warm_up_waits_until_the_client_is_idle(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    make_repo(tmp_path / "repo", FILES)
    pkg = tmp_path / "repo" / "pkg"
    Follower([pkg], ref=None, log=lambda m: None).initial()  # fills the build cache
    monkeypatch.setattr(follow, "PREPARE_AT", 1)  # this one-prompt set counts as large
    logs: list[str] = []
    follower = Follower([pkg], ref=None, log=logs.append)
    follower.initial()
    idle = [0.0]
    follower.idle_for = lambda: idle[0]
    follower.start(lambda bundles: None)
    try:
        time.sleep(follow.POLL_S * 6)
        assert not any("warmed up" in m for m in logs)  # the client is busy
        idle[0] = follow.WARM_IDLE_S
        deadline = time.monotonic() + 10
        while not any("warmed up" in m for m in logs) and time.monotonic() < deadline:
            time.sleep(follow.POLL_S)
        assert any("warmed up" in m for m in logs)
    finally:
        follower.stop()



class _SlowCore:
    """A protocol core (transports.Dispatcher) whose every answer takes longer than
    WARM_IDLE_S, and that records how idle the transport says its client is meanwhile."""

    def __init__(self, out: Output) -> None:
        self.out = out
        self.seen: list[float] = []

    def open(self, send: object) -> None:
        return None

    def handle(self, session: object, message: object) -> list[dict[str, object]]:
        start = time.monotonic()
        while time.monotonic() - start < follow.WARM_IDLE_S * 2:
            self.seen.append(self.out.idle_for())
            time.sleep(0.01)
        assert isinstance(message, dict)
        return [{"jsonrpc": "2.0", "id": message["id"], "result": {}}]

    def reject(self, session: object, err: object) -> dict[str, object]:
        raise AssertionError(f"unexpected unreadable message: {err}")

    def close(self, session: object) -> list[dict[str, object]]:
        return []


def test_a_slow_answer_is_not_idle_time() -> None:
    """A client waiting for an answer is not idle: counted from the read, one answer
    slower than WARM_IDLE_S (a collector's pass at 100,000 prompts) let the warm-up start
    in the middle of the client's requests."""
    read_in, write_in = os.pipe()
    read_out, write_out = os.pipe()
    out = Output(write_out)
    core = _SlowCore(out)
    worker = threading.Thread(target=stdio.serve, args=(core, out, read_in), daemon=True)
    worker.start()  # not the main thread: serve answers inline
    try:
        os.write(write_in, b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
        reply = b""
        while not reply.endswith(b"\n"):
            reply += os.read(read_out, 4096)
        after = out.idle_for()
    finally:
        os.close(write_in)
        worker.join(timeout=10)
        for fd in (read_in, read_out, write_out):
            os.close(fd)
    assert b'"id":1' in reply.replace(b" ", b"")
    assert core.seen and max(core.seen) < follow.WARM_IDLE_S  # busy all along
    assert 0 <= after < follow.WARM_IDLE_S  # idle from the answer on, not from the read


def test_the_warm_up_runs_with_the_collector_paused_and_turns_it_back_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the warm-up makes lives as long as the served set: a collector's pass while it
    grows frees nothing and holds the interpreter (0.4 s at 100 packages of 1,000
    prompts, loaded). The collector is back on after it."""
    make_repo(tmp_path / "repo", FILES)
    pkg = tmp_path / "repo" / "pkg"
    Follower([pkg], ref=None, log=lambda m: None).initial()  # fills the build cache
    enabled: list[bool] = []
    real = Built.prepare

    def prepare(self: Built, directory: Path, commit: str) -> object:
        enabled.append(gc.isenabled())
        return real(self, directory, commit)

    monkeypatch.setattr(Built, "prepare", prepare)
    logs: list[str] = []
    follower = Follower([pkg], ref=None, log=logs.append)
    follower.initial()
    assert gc.isenabled()
    follower.warm_up()
    assert enabled == [False]  # made with the collector paused
    assert gc.isenabled()  # and back on after
    assert any("warmed up" in m for m in logs)
