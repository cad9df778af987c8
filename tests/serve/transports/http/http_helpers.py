"""A real `promptops serve --http` process on a free port, and small HTTP helpers.

Every test module starts its servers once (module-scoped fixtures), over real sockets;
requests go through httpx2 (the HTTP client the official Python SDK uses).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx2

V26 = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": V26,
        "io.modelcontextprotocol/clientCapabilities": {}}
JSON_ACCEPT = {"content-type": "application/json",
               "accept": "application/json, text/event-stream"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_healthy(base: str, proc: subprocess.Popen[Any], why: Any, timeout: float = 30) -> None:
    """Until ``base``/healthz answers; ``why()`` says what went wrong if ``proc`` exits."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"server exited {proc.returncode}:\n{why()}")
        try:
            httpx2.get(base + "/healthz", timeout=1)
            return
        except httpx2.HTTPError:
            time.sleep(0.05)
    raise AssertionError(f"server did not start:\n{why()}")


class HttpServer:
    """``promptops serve --http 127.0.0.1:PORT ARGS`` until stop(); stderr kept in a file."""

    def __init__(self, args: list[str], log: Path, *, cwd: Path | None = None,
                 env: dict[str, str] | None = None, port: int | None = None) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = log
        self._err = log.open("wb")
        cmd = [sys.executable, "-m", "promptops", "serve", "--http",
               f"127.0.0.1:{self.port}", *args]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=self._err, cwd=cwd,
                                     env={**os.environ, **(env or {})})
        self._wait_ready()

    def _wait_ready(self) -> None:
        wait_healthy(self.base, self.proc, self.stderr)

    def stderr(self) -> str:
        self._err.flush()
        return self.log.read_text(errors="replace")

    def stop(self, timeout: float = 15.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._err.close()
        return self.proc.returncode


def modern(method: str, params: dict[str, Any] | None = None, rid: Any = 1,
           name: str | None = None) -> tuple[dict[str, Any], dict[str, str]]:
    """A 2026-07-28 request body and its headers."""
    body = {"jsonrpc": "2.0", "id": rid, "method": method,
            "params": {**(params or {}), "_meta": META}}
    headers = {**JSON_ACCEPT, "mcp-protocol-version": V26, "mcp-method": method}
    if name is not None:
        headers["mcp-name"] = name
    return body, headers


def post(url: str, body: Any, headers: dict[str, str] | None = None,
         **kw: Any) -> httpx2.Response:
    return httpx2.post(url, content=json.dumps(body), headers={**JSON_ACCEPT, **(headers or {})},
                       timeout=10, **kw)


def initialize(url: str, headers: dict[str, str] | None = None,
               version: str = "2025-11-25") -> str:
    """A new session-era session; its Mcp-Session-Id (initialized)."""
    r = post(url, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}}, headers)
    assert r.status_code == 200, r.text
    sid = r.headers["mcp-session-id"]
    r = post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"},
             {**(headers or {}), "mcp-session-id": sid})
    assert r.status_code == 202
    return sid
