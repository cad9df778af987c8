"""`serve --worktree` loses no save made after the process started (issue 24, item 5).

The server answers ``initialize`` before its OS watch is in place (the watcher thread
imports watchfiles and sets the watch up meanwhile: 0.2-0.7 s idle, seconds under load).
A save in that gap was never picked up: later gets returned the old text and no
``list_changed`` came. Each run here starts a real server, saves 10 ms after the process
started or 10 ms after its ``initialize`` reply (the gap), and then requires that the
client is served the new text: at once, or after a ``list_changed`` that announces it.
benchmarks/worktree_early_save.py does 100 runs under a CPU burner.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from helpers.repo import cli_env, make_repo
from serve_helpers import RawClient

REV = "2025-11-25"
MANIFEST = "name: live\nversion: 0.1.0\ndescription: live edits\n"
OLD = "description: Say hello\nmessages:\n  - role: user\n    text: Hello!\n"
NEW = OLD.replace("Hello!", "Hello, saved early!")
LIST_CHANGED = "notifications/prompts/list_changed"
RUNS = 10


def _save(path: Path, text: str, *, rename: bool) -> None:
    if rename:  # as editors that write a temp file and rename it over the original
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    else:  # in place, as `echo >` or an editor without safe-write
        path.write_text(text, encoding="utf-8")


class _Client:
    """Requests by id over a RawClient; notifications are kept, in order."""

    def __init__(self, c: RawClient) -> None:
        self.c = c
        self.notes: list[str] = []
        self._id = 100

    def call(self, method: str, params: dict[str, Any]) -> Any:
        self._id += 1
        self.c.send({"jsonrpc": "2.0", "id": self._id, "method": method, "params": params})
        while True:
            msg = self.c.recv(timeout=30)
            if msg.get("id") == self._id:
                return msg["result"]
            self.notes.append(msg.get("method"))

    def wait_note(self, method: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while method not in self.notes:
            self.notes.append(self.c.recv(timeout=max(0.01, deadline - time.monotonic()))
                              .get("method"))

    def text(self) -> str:
        got = self.call("prompts/get", {"name": "hello", "arguments": {}})
        return str(got["messages"][0]["content"]["text"])


def one_run(tmp: Path, anchor: str, delay: float, *, rename: bool) -> str:
    """A server, a save ``delay`` s after ``anchor``; what the client was served, and how."""
    root = tmp / "pkg"
    make_repo(root, {"promptops.yaml": MANIFEST, "prompts/hello.prompt.yaml": OLD})
    prompt = root / "prompts" / "hello.prompt.yaml"
    raw = RawClient(["--worktree", str(root)], REV, env=cli_env())
    try:
        if anchor == "start":
            time.sleep(delay)
            _save(prompt, NEW, rename=rename)
        c = _Client(raw)
        init = c.call("initialize", {"protocolVersion": REV, "capabilities": {},
                                     "clientInfo": {"name": "raw", "version": "1"}})
        assert init["capabilities"]["prompts"]["listChanged"] is True
        if anchor == "initialize":
            time.sleep(delay)
            _save(prompt, NEW, rename=rename)
        raw.notify("notifications/initialized")
        first = c.text()
        if first == "Hello, saved early!":
            return "served"
        assert first == "Hello!", first
        c.wait_note(LIST_CHANGED, timeout=20)  # the save must be announced ...
        after = c.text()
        assert after == "Hello, saved early!", after  # ... and served
        return "announced"
    finally:
        rc, err = raw.close()
        assert rc == 0, err


@pytest.mark.parametrize("anchor", ["start", "initialize"])
def test_a_save_10_ms_after_the_start_is_served_and_announced(tmp_path: Path,
                                                              anchor: str) -> None:
    runs = RUNS // 2
    with ThreadPoolExecutor(2) as pool:  # two servers at a time: the load is welcome
        verdicts = list(pool.map(
            lambda run: one_run(tmp_path / f"run{run}", anchor, 0.010, rename=run % 2 == 0),
            range(runs)))
    assert len(verdicts) == runs
    if anchor == "initialize":  # saved after the first reply: the client saw the old text
        assert "announced" in verdicts, verdicts
