"""`create_app` as an ASGI factory under plain uvicorn, configured from the environment."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from http_helpers import free_port, modern, post, wait_healthy

from promptops.errors import UsageError


def test_uvicorn_factory_reads_promptops_serve_args(kit_dir: Path, tmp_path: Path) -> None:
    port = free_port()
    env = {**os.environ, "PROMPTOPS_SERVE_ARGS": f"{kit_dir} --page-size 2 --no-access-log"}
    proc = subprocess.Popen([sys.executable, "-m", "uvicorn", "--factory",
                             "promptops.__main__:create_app", "--port", str(port)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        wait_healthy(f"http://127.0.0.1:{port}", proc,
                     lambda: proc.stderr.read() if proc.stderr else "")
        b, h = modern("prompts/list")
        result = post(url, b, h).json()["result"]
        assert len(result["prompts"]) == 2 and result["nextCursor"]  # --page-size 2 applied
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(15)


def test_uvicorn_factory_with_the_bounded_protocol(kit_dir: Path) -> None:
    """docs/http.md's spelling for the head/time/connection bounds under your own uvicorn."""
    import socket

    port = free_port()
    env = {**os.environ, "PROMPTOPS_SERVE_ARGS": f"{kit_dir} --no-access-log"}
    proc = subprocess.Popen([sys.executable, "-m", "uvicorn", "--factory",
                             "promptops.__main__:create_app", "--port", str(port),
                             "--http", "promptops.serve.limits:BoundedHttpTools"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_healthy(f"http://127.0.0.1:{port}", proc,
                     lambda: proc.stderr.read() if proc.stderr else "")
        with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: "
                         + b"b" * 100_000)
            assert sock.recv(64).startswith(b"HTTP/1.1 431 ")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(15)


def test_http_flag_spellings(tmp_path: Path) -> None:
    from promptops.serve.options import ServeOptions

    def bind(*argv: str) -> tuple[str, int, list[Path]]:
        options = ServeOptions.parse(list(argv))
        return options.host, options.port, list(options.paths)

    assert bind("--http", ":9000")[:2] == ("127.0.0.1", 9000)
    assert bind("--http", "0.0.0.0:81")[:2] == ("0.0.0.0", 81)
    assert bind("--http", "[::1]:82")[:2] == ("::1", 82)
    assert bind("--http", "83")[:2] == ("127.0.0.1", 83)
    assert bind("--http", "--port", "84")[:2] == ("127.0.0.1", 84)  # the bench's spelling
    assert bind("--http", str(tmp_path)) == ("127.0.0.1", 8080, [tmp_path])
    with pytest.raises(UsageError, match="HOST:"):
        bind("--http", "no-such-folder")


def test_a_taken_port_is_an_error_not_a_bug(kit_dir: Path) -> None:
    """uvicorn ends a failed bind with SystemExit(3), our bug status: the front door
    makes it an `error:` line and exit 1 (the `cannot serve on` path it always meant)."""
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run([sys.executable, "-m", "promptops", "serve", "--http",
                               f"127.0.0.1:{port}", str(kit_dir)], capture_output=True,
                              text=True, timeout=120, check=False)
    assert done.returncode == 1, done.stderr
    assert f"promptops serve: error: cannot serve on 127.0.0.1:{port}" in done.stderr
