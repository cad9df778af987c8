"""A request body in several pieces reads as the same body, and its bound holds across them.

The stateless hot path reads a one-piece body without the reading loop (a coroutine less
per request); a body the ASGI server hands over in chunks (``Transfer-Encoding: chunked``
written in separate pieces) still goes through the loop, and the ``--max-body`` bound
counts every chunk. Raw sockets against a real `promptops serve --http`.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from http_helpers import HttpServer, modern, post

LIMIT = 100_000


@pytest.fixture(scope="module")
def server(kit_dir: Path, module_env: dict[str, str],
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    srv = HttpServer([str(kit_dir), "--max-body", str(LIMIT)],
                     tmp_path_factory.mktemp("log") / "server.log", env=module_env)
    yield srv
    assert srv.stop() == 0, srv.stderr()


def _chunked(server: HttpServer, body: bytes, headers: dict[str, str],
             pieces: int) -> tuple[int, Any]:
    """POST ``body`` as ``pieces`` chunks, each written on its own (paced, so that the
    server reads them apart); the status and the JSON reply."""
    head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    step = -(-len(body) // pieces)
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(f"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{server.port}\r\n{head}"
                     "transfer-encoding: chunked\r\nconnection: close\r\n\r\n".encode())
        for at in range(0, len(body), step):
            piece = body[at:at + step]
            try:
                sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
            except OSError:  # refused mid-body (the bound): the reply is already there
                break
            time.sleep(0.02)
        else:
            sock.sendall(b"0\r\n\r\n")
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    status = int(data.split(b" ", 2)[1])
    raw = data.split(b"\r\n\r\n", 1)[1]
    if b"transfer-encoding: chunked" in data.split(b"\r\n\r\n", 1)[0].lower():
        raw = b"".join(raw.split(b"\r\n")[1::2])
    return status, json.loads(raw) if raw.strip() else None


def test_a_body_in_chunks_reads_as_in_one_piece(server: HttpServer) -> None:
    body, headers = modern("prompts/list")
    whole = post(server.url, body, headers)
    assert whole.status_code == 200
    status, reply = _chunked(server, json.dumps(body).encode(), headers, 4)
    assert (status, reply) == (200, whole.json())


def test_the_body_bound_counts_every_chunk(server: HttpServer) -> None:
    body, headers = modern("prompts/list", {"pad": "x" * (LIMIT + 10)})
    status, reply = _chunked(server, json.dumps(body).encode(), headers, 5)
    assert status == 413 and reply["error"]["code"] == -32600, reply


def test_a_one_piece_body_at_the_bound_is_read_and_one_past_it_refused(
        server: HttpServer) -> None:
    body, headers = modern("prompts/list", {"pad": ""})
    pad = LIMIT - len(json.dumps(body))
    at = json.loads(json.dumps(body).replace('"pad": ""', '"pad": "' + "x" * pad + '"'))
    assert len(json.dumps(at)) == LIMIT
    assert post(server.url, at, headers).status_code == 200
    at["params"]["pad"] += "x"
    assert post(server.url, at, headers).status_code == 413
