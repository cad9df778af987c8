"""The exit contract in every order: exit status 0, and every open subscriptions/listen
gets its final result, whether SIGTERM comes before any input, during a render, right
after stdin EOF (how the TypeScript v2 client tears down its probe process) or while the
server is already shutting down."""

from __future__ import annotations

import signal
import subprocess
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import git
from helpers.repo import PYTHON, SIGNALS, cli_env, posix_only
from serve_helpers import RawClient, envelope, kit_files

from promptops.pipeline.build import Build
from promptops.pipeline.bundle import serialise

MODERN = "2026-07-28"
SUB = "io.modelcontextprotocol/subscriptionId"
pytestmark = posix_only(SIGNALS)
SLOW = ("messages:\n  - role: user\n    text: \"{% set s = 'x' * 1000000 %}"
        "{% for a in s %}{% for b in s %}{% endfor %}{% endfor %}\"\n")


def _bundle(repo_factory: Callable[..., git.Repo], tmp_path: Path) -> Path:
    files = {**kit_files(extra_prompts=0), "prompts/slow.prompt.yaml": SLOW}
    root = Path(repo_factory(files).working_tree_dir or ".")
    path = tmp_path / "kit.bundle.json"
    path.write_bytes(serialise(Build(root, "HEAD").bundle))
    return path


def _listen(c: RawClient, sid: str) -> None:
    c.send({"jsonrpc": "2.0", "id": sid, "method": "subscriptions/listen",
            "params": {**envelope(), "notifications": {"promptsListChanged": True}}})


def _ready(c: RawClient) -> None:
    """Wait for the start line: the server is serving, its signal handling in place."""
    assert c.proc.stderr is not None
    line = c.proc.stderr.readline()
    assert b"serving" in line, line


def _rest(c: RawClient) -> list[Any]:
    """Every message still to come until stdout closes, each judged by the schema."""
    out = []
    while True:
        try:
            out.append(c.recv(timeout=30))
        except EOFError:
            return out


def _finals(messages: list[Any]) -> list[Any]:
    return [m["id"] for m in messages if "result" in m and SUB in m["result"].get("_meta", {})]


def test_sigterm_before_any_input(kit_bundle: Path) -> None:
    c = RawClient(["--bundle", str(kit_bundle)], MODERN)
    _ready(c)
    c.proc.send_signal(signal.SIGTERM)
    assert c.proc.wait(timeout=30) == 0
    assert _rest(c) == []
    assert c.proc.stderr is not None and b"Traceback" not in c.proc.stderr.read()


def test_sigterm_during_a_render(repo_factory: Callable[..., git.Repo], tmp_path: Path) -> None:
    c = RawClient(["--bundle", str(_bundle(repo_factory, tmp_path))], MODERN)
    _listen(c, "sub")
    assert c.recv()["method"] == "notifications/subscriptions/acknowledged"
    c.send({"jsonrpc": "2.0", "id": "get", "method": "prompts/get",
            "params": {**envelope(), "name": "slow"}})  # renders for 2 s, then -32603
    time.sleep(0.4)
    c.proc.send_signal(signal.SIGTERM)
    assert c.proc.wait(timeout=30) == 0
    rest = _rest(c)
    assert _finals(rest) == ["sub"]  # the listen ends with its result
    assert all(m.get("id") != "get" for m in rest)  # the render was abandoned, not awaited
    assert c.proc.stderr is not None and b"Traceback" not in c.proc.stderr.read()


def test_sigterm_right_after_stdin_eof(kit_bundle: Path) -> None:
    for attempt in range(5):  # the race the TypeScript client creates: try it a few times
        c = RawClient(["--bundle", str(kit_bundle)], MODERN)
        subs = [f"s{attempt}-{i}" for i in range(200)]
        for sid in subs:
            _listen(c, sid)
        for _ in subs:
            c.recv()
        assert c.proc.stdin is not None
        c.proc.stdin.close()
        c.proc.send_signal(signal.SIGTERM)
        assert c.proc.wait(timeout=30) == 0, attempt
        assert sorted(_finals(_rest(c))) == sorted(subs), attempt
        assert c.proc.stderr is not None and b"Traceback" not in c.proc.stderr.read()


def test_sigterm_during_shutdown(kit_bundle: Path) -> None:
    c = RawClient(["--bundle", str(kit_bundle)], MODERN)
    subs = [f"sub-{i}" for i in range(1500)]  # their final results overflow a pipe buffer
    for chunk in range(0, len(subs), 100):
        for sid in subs[chunk : chunk + 100]:
            _listen(c, sid)
        for _ in range(100):
            c.recv()
    c.stop_reading()
    assert c.proc.stdin is not None
    c.proc.stdin.close()  # EOF: the server starts writing 1,500 final results, and blocks
    time.sleep(0.5)
    c.proc.send_signal(signal.SIGTERM)
    c.proc.send_signal(signal.SIGTERM)
    c.resume_reading()
    assert c.proc.wait(timeout=30) == 0
    assert _finals(_rest(c)) == subs
    assert c.proc.stderr is not None and b"Traceback" not in c.proc.stderr.read()


def test_sigint_is_an_orderly_end_too(kit_bundle: Path) -> None:
    c = RawClient(["--bundle", str(kit_bundle)], MODERN)
    _listen(c, "sub")
    c.recv()
    c.proc.send_signal(signal.SIGINT)
    assert c.proc.wait(timeout=30) == 0
    assert _finals(_rest(c)) == ["sub"]


# A signal at every line the handler runs, the handler's callees included, while one handler
# is on the stack: Python runs the next handler at that point (at most 50 signals in all).
_NESTED = textwrap.dedent("""
    import os, signal, sys
    from promptops.serve.transports.stdio import Signals

    signals = Signals()
    assert signals.install()
    sent = [0]

    def handlers(frame):
        n = 0
        while frame is not None:
            n += frame.f_code is Signals._note.__code__
            frame = frame.f_back
        return n

    def tracer(frame, event, arg):
        if event == "line" and sent[0] < 50 and handlers(frame) == 1:
            sent[0] += 1
            signal.raise_signal(signal.SIGTERM)
        return tracer

    sys.settrace(tracer)
    signal.raise_signal(signal.SIGTERM)
    for _ in range(1000):  # bytecodes at which a pending signal's handler runs
        pass
    sys.settrace(None)
    signals.wait()
    print("woken", signals.received, sent[0])
""")


def test_a_signal_inside_the_handler_of_the_last_one_neither_hangs_nor_raises() -> None:
    """Python runs a signal handler at a bytecode boundary of the main thread, also inside
    a handler that is still running. The stdio handler set a ``threading.Event``, whose
    lock it held while a SIGTERM storm (tests/hardening/test_serve_exit.py) ran the next
    handler inside it: that one waited for the lock for ever, each further signal nested
    another, and a RecursionError ended serve with exit 3 (session 18, at load 15-25).
    Here a signal lands at every line the handler executes (deterministic, under any load):
    the handler must return, and the main thread be woken."""
    done = subprocess.run([PYTHON, "-c", _NESTED], capture_output=True, env=cli_env(),
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.split()[:2] == [b"woken", b"True"], done.stdout
