"""The keep-alive timeout on the connection's one timer closes what uvicorn's closes.

:class:`~promptops.serve.limits.BoundedHttpTools` keeps uvicorn's keep-alive deadline on
the connection's lazily moved timer instead of a loop timer made and cancelled per
request. Against uvicorn's own protocol on the same app, with a short keep-alive: a
connection left idle after a reply is closed after the timeout; one that asks again
within it, many times over a span longer than it, stays open and is answered every time;
a connection whose reply went out while its request's body was still coming is closed at
the keep-alive deadline as uvicorn closes it (the body's own deadline comes later).
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest
import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from promptops.serve.limits import KEPT_ALIVE, BoundedHttpTools, protocol

KEEP_S = 0.6
REQUEST = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"


async def _app(scope: dict[str, object], receive: object, send: object) -> None:
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 200,  # type: ignore[operator]
                "headers": [(b"content-type", b"text/plain"), (b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"ok"})  # type: ignore[operator]


class _Served:
    def __init__(self, http: type[HttpToolsProtocol]) -> None:
        config = uvicorn.Config(_app, host="127.0.0.1", port=0, http=http, lifespan="off",
                                log_level="error", timeout_keep_alive=KEEP_S)  # type: ignore[arg-type]
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.02)
        self.port = self.server.servers[0].sockets[0].getsockname()[1]

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)

    def connect(self) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port), timeout=10)


@pytest.fixture(params=["uvicorn", "bounded"])
def served(request: pytest.FixtureRequest) -> Iterator[_Served]:
    http = HttpToolsProtocol if request.param == "uvicorn" else protocol(
        header_timeout_s=10.0, body_timeout_s=10.0)
    srv = _Served(http)
    yield srv
    srv.stop()


def _answer(sock: socket.socket) -> bytes:
    data = b""
    while not data.endswith(b"\r\n\r\nok"):
        chunk = sock.recv(4096)
        if not chunk:
            return data
        data += chunk
    return data


def _closed_within(sock: socket.socket, seconds: float) -> bool:
    sock.settimeout(seconds)
    try:
        return sock.recv(4096) == b""
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True


def test_an_idle_connection_is_closed_after_the_keep_alive(served: _Served) -> None:
    sock = served.connect()
    try:
        sock.sendall(REQUEST)
        assert _answer(sock).startswith(b"HTTP/1.1 200 OK")
        started = time.monotonic()
        assert _closed_within(sock, KEEP_S * 8)
        assert time.monotonic() - started >= KEEP_S * 0.8
    finally:
        sock.close()


def test_a_connection_asking_within_the_keep_alive_stays_open(served: _Served) -> None:
    sock = served.connect()
    try:
        for _ in range(5):  # 5 x 0.5 of the timeout: longer than it in all
            sock.sendall(REQUEST)
            assert _answer(sock).startswith(b"HTTP/1.1 200 OK")
            assert not _closed_within(sock, KEEP_S * 0.5)
    finally:
        sock.close()


def test_a_reply_before_the_body_ends_is_closed_at_the_keep_alive(served: _Served) -> None:
    sock = served.connect()
    try:
        sock.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nabc")
        assert _answer(sock).startswith(b"HTTP/1.1 200 OK")
        assert _closed_within(sock, KEEP_S * 8)
    finally:
        sock.close()


def test_the_bounded_protocol_keeps_no_loop_timer_per_reply() -> None:
    """What the change is for: after a reply the keep-alive stands as KEPT_ALIVE, not a
    loop timer of uvicorn's."""
    seen: list[object] = []

    class Watching(BoundedHttpTools):
        def on_response_complete(self) -> None:
            super().on_response_complete()
            seen.append(self.timeout_keep_alive_task)

    srv = _Served(Watching)
    try:
        sock = srv.connect()
        for _ in range(3):
            sock.sendall(REQUEST)
            assert _answer(sock).startswith(b"HTTP/1.1 200 OK")
        sock.close()
    finally:
        srv.stop()
    assert seen == [KEPT_ALIVE] * 3
