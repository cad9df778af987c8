"""What a connection may cost before authentication (issue 23, defects 9 and 11).

Raw sockets against a real `promptops serve --http` (with tokens: everything here
happens before a token is looked at): a head past --max-header-bytes is 431 with memory
flat and other clients answered meanwhile; a head or a body sent too slowly is 408; an
idle connection is closed; connections past --max-connections get 503 at once.
"""

from __future__ import annotations

import hashlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from http_helpers import HttpServer, modern, post

TOKEN = "token-for-limits-0123456789"


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


@pytest.fixture(scope="module")
def server(kit_dir: Path, tmp_path_factory: pytest.TempPathFactory,
           module_env: dict[str, str]) -> Iterator[HttpServer]:
    tmp = tmp_path_factory.mktemp("limits")
    tokens = tmp / "tokens.json"
    tokens.write_text(json.dumps({"tokens": [
        {"name": "t", "sha256": hashlib.sha256(TOKEN.encode()).hexdigest()}]}))
    srv = HttpServer([str(kit_dir), "--tokens", str(tokens), "--header-timeout", "1s",
                      "--body-timeout", "1s", "--max-connections", "40"],
                     tmp / "server.log", env=module_env)
    yield srv
    assert srv.stop() == 0, srv.stderr()


def _connect(srv: HttpServer) -> socket.socket:
    return socket.create_connection(("127.0.0.1", srv.port), timeout=20)


def _status(sock: socket.socket) -> int:
    """The status of the first response on ``sock`` (0: closed without one)."""
    data = b""
    while b"\r\n" not in data:
        try:
            chunk = sock.recv(4096)
        except ConnectionResetError:
            return 0
        if not chunk:
            return 0
        data += chunk
    return int(data.split(b" ", 2)[1])


def _get_prompt(srv: HttpServer) -> float:
    body, headers = modern("prompts/get", {"name": "code_review", "arguments": {
        "code": "x", "language": "python"}}, name="code_review")
    started = time.perf_counter()
    r = post(srv.url, body, {**headers, "authorization": f"Bearer {TOKEN}"})
    assert r.status_code == 200, r.text
    return time.perf_counter() - started


def test_huge_header_is_431_memory_flat_others_served(server: HttpServer) -> None:
    _get_prompt(server)
    before = _rss_kb(server.proc.pid)
    sock = _connect(server)
    sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ")
    sent = 0
    chunk = b"a" * (1 << 20)
    refused = threading.Event()

    def flood() -> None:  # what an attacker does: keep sending (32 MB) until cut off
        nonlocal sent
        try:
            while sent < 32 << 20 and not refused.is_set():
                sock.sendall(chunk)
                sent += len(chunk)
        except OSError:
            pass

    sender = threading.Thread(target=flood)
    sender.start()
    try:
        status = _status(sock)
        refused.set()
        worst = max(_get_prompt(server) for _ in range(5))  # others are answered meanwhile
    finally:
        refused.set()
        sender.join(30)
        sock.close()
    assert status == 431
    assert sent < 16 << 20, sent  # cut off early, not after the whole 32 MB
    assert worst < 2.0, worst
    assert _rss_kb(server.proc.pid) - before < 20_000


def test_header_just_under_the_bound_is_served(server: HttpServer) -> None:
    r = httpx2.get(server.base + "/healthz", headers={"x-pad": "p" * 60_000})
    assert r.status_code == 200
    # a body far past the head bound, in the same writes as its head, is not a big head
    body, headers = modern("prompts/list")
    payload = json.dumps({**body, "pad": "q" * 1_000_000})
    r = post(server.url, json.loads(payload), {**headers, "authorization": f"Bearer {TOKEN}"})
    assert r.status_code == 200, r.text


def test_slow_head_is_408_and_idle_connection_closed(server: HttpServer) -> None:
    sock = _connect(server)
    sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and never the end
    started = time.monotonic()
    assert _status(sock) == 408
    assert time.monotonic() - started < 5
    sock.close()
    idle = _connect(server)  # connects, sends nothing
    started = time.monotonic()
    assert idle.recv(100) == b""  # closed by the server
    assert time.monotonic() - started < 5
    idle.close()


def test_slow_body_is_408(server: HttpServer) -> None:
    sock = _connect(server)
    sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                 b"Authorization: Bearer " + TOKEN.encode() + b"\r\n"
                 b"Content-Length: 100\r\n\r\n{\"jsonrpc\":")  # 11 of 100 bytes
    started = time.monotonic()
    assert _status(sock) == 408
    assert time.monotonic() - started < 5
    sock.close()
    _get_prompt(server)  # the server is fine


def test_connections_are_capped(server: HttpServer) -> None:
    held = [_connect(server) for _ in range(40)]
    try:
        time.sleep(0.2)
        extra = _connect(server)
        assert _status(extra) == 503
        extra.close()
    finally:
        for s in held:
            s.close()
    time.sleep(0.3)
    _get_prompt(server)  # room again once they are gone


@pytest.fixture(scope="module")
def timed(kit_dir: Path, tmp_path_factory: pytest.TempPathFactory,
          module_env: dict[str, str]) -> Iterator[HttpServer]:
    """A head bound much shorter than the body bound: a deadline left from one phase
    must never decide another's (limits.py moves one timer per connection lazily)."""
    tmp = tmp_path_factory.mktemp("timed")
    srv = HttpServer([str(kit_dir), "--header-timeout", "0.5s", "--body-timeout", "3s"],
                     tmp / "server.log", env=module_env)
    yield srv
    assert srv.stop() == 0, srv.stderr()


def _response(sock: socket.socket) -> tuple[int, bytes]:
    """One whole response (status, body) read from a kept-alive connection."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, data
        data += chunk
    head, rest = data.split(b"\r\n\r\n", 1)
    length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length:"))
    while len(rest) < length:
        chunk = sock.recv(65536)
        assert chunk, rest
        rest += chunk
    return int(head.split(b" ", 2)[1]), rest


def test_each_phase_keeps_its_own_deadline(timed: HttpServer) -> None:
    body, headers = modern("prompts/list")
    raw = json.dumps(body).encode()
    head = (b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %d\r\n" % len(raw)
            + b"".join(f"{k}: {v}\r\n".encode() for k, v in headers.items()) + b"\r\n")
    sock = _connect(timed)
    try:
        # the body arrives after the head's bound but within the body's: answered
        sock.sendall(head)
        time.sleep(1.2)
        sock.sendall(raw)
        status, reply = _response(sock)
        assert status == 200, reply
        # the same connection, again at once: a complete request is answered
        sock.sendall(head + raw)
        assert _response(sock)[0] == 200
        # a head that never ends is 408 after the head's bound, not at a deadline the
        # body phase of the requests before would have set (3 s after their heads)
        sock.sendall(head[:20])
        started = time.monotonic()
        assert _status(sock) == 408
        assert 0.4 < time.monotonic() - started < 1.8
    finally:
        sock.close()
