"""How `promptops serve` ends when its client goes away, and the stdio limits.

The client may close stdin in the middle of a line or of a slow request, or close its end
of stdout and keep writing: the server exits 0 with nothing but its start line on stderr.
"""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import time
from pathlib import Path

from hardening_helpers import record, repo_with
from helpers.repo import PYTHON, cli_env
from helpers.repo import run_cli as cli  # set-up only: serve itself runs as a process

from promptops.serve.transports.stdio import MAX_DEPTH

AREA = "serve process"
SLOW = ("messages:\n  - role: user\n    text: \"{% set s = 'x' * 1000000 %}"
        "{% for a in s %}{% for b in s %}{% endfor %}{% endfor %}\"\n")
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}}}


def bundle(tmp_path: Path) -> Path:
    root = Path(repo_with(tmp_path / "pkg", {"prompts/slow.prompt.yaml": SLOW}).working_tree_dir
                or ".")
    assert cli("build", "--no-lint", "-o", str(tmp_path / "dist"), cwd=root).returncode == 0
    return tmp_path / "dist" / "demo-1.0.0.bundle.json"


def start(path: Path, stdout: int | None = subprocess.PIPE) -> subprocess.Popen[bytes]:
    return subprocess.Popen([PYTHON, "-m", "promptops", "serve", "--bundle", str(path)],
                            stdin=subprocess.PIPE, stdout=stdout, stderr=subprocess.PIPE,
                            env=cli_env())


def line(msg: object) -> bytes:
    return json.dumps(msg).encode() + b"\n"


def quiet(stderr: bytes) -> list[str]:
    lines = [ln for ln in stderr.decode().splitlines() if ln.strip()]
    assert not any("Traceback" in ln or "Error" in ln for ln in lines), lines
    return lines


def test_stdin_closed_mid_line_and_mid_request(tmp_path: Path) -> None:
    path = bundle(tmp_path)
    proc = start(path)  # half a message, then EOF
    out, err = proc.communicate(line(INIT) + b'{"jsonrpc":"2.0","id":2,"method":"prompts/li',
                                timeout=30)
    assert proc.returncode == 0 and json.loads(out.splitlines()[0])["id"] == 1
    assert len(out.splitlines()) == 2  # the half line is answered as a parse error
    assert json.loads(out.splitlines()[1])["error"]["code"] == -32700
    assert len(quiet(err)) == 1
    proc = start(path)  # EOF while the 2 s render is under way
    out, err = proc.communicate(line(INIT) + line({"jsonrpc": "2.0", "id": 2, "method":
                                                   "prompts/get", "params": {"name": "slow"}}),
                                timeout=30)
    replies = [json.loads(r) for r in out.splitlines()]
    assert proc.returncode == 0 and [r["id"] for r in replies] == [1, 2]
    # 2 s of CPU time, or (at a load that starves the render thread) the 10 s wall backstop
    assert replies[1]["error"]["code"] == -32603 and (
        "longer than 2 s" in replies[1]["error"]["message"]
        or "longer than 10 s of wall time" in replies[1]["error"]["message"])
    assert len(quiet(err)) == 1
    record(AREA, "client closes stdin mid-line or during a slow request", "serve",
           "the pending request is still answered (a half line as -32700), then exit 0; "
           "stderr holds only the start line", "test_serve_exit.py::"
           "test_stdin_closed_mid_line_and_mid_request")


def test_stdout_closed_by_the_client(tmp_path: Path) -> None:
    path = bundle(tmp_path)
    proc = start(path)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(line(INIT))
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 1
    proc.stdout.close()  # the client stops reading
    for i in range(50):  # keep talking: every reply now hits a closed pipe
        try:
            proc.stdin.write(line({"jsonrpc": "2.0", "id": 10 + i, "method": "prompts/list"}))
            proc.stdin.flush()
        except BrokenPipeError:
            break
        time.sleep(0.01)
    rc = proc.wait(timeout=30)
    err = proc.stderr.read() if proc.stderr else b""
    assert rc == 0, err
    assert len(quiet(err)) == 1
    record(AREA, "client closes its end of stdout", "serve",
           "exit 0 at the first reply that cannot be written; no traceback, stderr holds only "
           "the start line", "test_serve_exit.py::test_stdout_closed_by_the_client")


def test_nesting_limit(tmp_path: Path) -> None:
    path = bundle(tmp_path)
    proc = start(path)
    ok = {"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {"x": "@"}}
    deep_ok = json.dumps(ok).replace('"@"', "[" * (MAX_DEPTH - 2) + "]" * (MAX_DEPTH - 2))
    too_deep = json.dumps(ok).replace('"@"', "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1))
    strings = json.dumps({**ok, "params": {"x": "[" * 5000}})  # brackets inside a string
    data = (line(INIT) + deep_ok.encode() + b"\n" + too_deep.encode() + b"\n"
            + b"[" * 200_000 + b"\n" + strings.encode() + b"\n")
    out, err = proc.communicate(data, timeout=60)
    replies = [json.loads(r) for r in out.splitlines()]
    assert replies[1] == {"jsonrpc": "2.0", "id": 2, "result": {}}
    assert replies[2]["error"]["code"] == -32700 and f"deeper than {MAX_DEPTH}" in replies[2][
        "error"]["message"]
    assert replies[3]["error"]["code"] == -32700  # 200,000 levels: no RecursionError crash
    assert replies[4]["result"] == {} and len(replies) == 5
    assert proc.returncode == 0 and len(quiet(err)) == 1
    record(AREA, f"JSON nested deeper than {MAX_DEPTH} levels (up to 200,000)", "serve",
           f"-32700 `nested deeper than {MAX_DEPTH}`, the connection goes on; "
           f"{MAX_DEPTH} levels are accepted", "test_serve_exit.py::test_nesting_limit")


def test_sigterm_right_after_stdin_closes_always_exits_0(tmp_path: Path) -> None:
    """Issue 23, defect 19: a client that quits closes stdin and sends SIGTERM at once.

    The signals keep coming (every ~0.2 ms) until the process is gone, so every moment of
    the exit path is hit: the final replies, the threads still running (the follower,
    the uncommitted-changes notice), interpreter shutdown. Each run must exit 0 with its
    replies written.
    """
    root = Path(repo_with(tmp_path / "pkg", {}).working_tree_dir or ".")
    listing = {"jsonrpc": "2.0", "id": 2, "method": "prompts/list"}
    codes = []
    why: list[str] = []  # stderr of each run that did not exit 0
    for i in range(20):
        proc = subprocess.Popen([PYTHON, "-m", "promptops", "serve", str(root)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=cli_env())
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(line(INIT) + line(listing))
        proc.stdin.flush()
        first = proc.stdout.readline()
        time.sleep(0.001 * (i % 5))
        proc.stdin.close()
        deadline = time.monotonic() + 30
        while proc.poll() is None and time.monotonic() < deadline:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)
            time.sleep(0.0002)
        rest = proc.stdout.read()
        proc.wait(5)
        codes.append(proc.returncode)
        if proc.returncode != 0:  # why, in the failure: an exit 3 is a bug to find
            assert proc.stderr is not None
            why.append(proc.stderr.read().decode(errors="replace")[-3000:])
        replies = [json.loads(r) for r in (first + rest).splitlines()]
        assert [r["id"] for r in replies][:1] == [1], replies
    assert codes == [0] * 20, (codes, why)
    record(AREA, "stdin closed, then SIGTERM at once (and again until exit)", "serve",
           "exit 0 in every run, replies written", "test_serve_exit.py::"
           "test_sigterm_right_after_stdin_closes_always_exits_0")
