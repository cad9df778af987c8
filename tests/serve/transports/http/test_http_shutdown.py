"""Graceful shutdown on SIGTERM: every stream ends with its final result, promptly."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import httpx2
from http_helpers import HttpServer, initialize, modern

from promptops.pipeline.build import Build
from promptops.pipeline.bundle import serialise


def _read_all(url: str, body: Any, headers: dict[str, str], out: list[Any],
              ready: threading.Event, method: str = "POST") -> None:
    with httpx2.Client(timeout=httpx2.Timeout(10, read=30)) as c, c.stream(
            method, url, content=json.dumps(body) if body else None, headers=headers) as resp:
        out.append(resp.status_code)
        ready.set()
        for line in resp.iter_lines():
            if line.startswith("data: ") and line[6:].strip():
                out.append(json.loads(line[6:]))
        out.append("ended")


def test_sigterm_ends_streams_with_their_final_result(kit_dir: Path, tmp_path: Path) -> None:
    bundle = tmp_path / "kit.bundle.json"
    bundle.write_bytes(serialise(Build(kit_dir, "HEAD").bundle))
    srv = HttpServer(["--bundle", str(bundle)], tmp_path / "server.log")
    streams: list[list[Any]] = []
    threads = []
    for rid in (1, "two"):
        body, headers = modern("subscriptions/listen",
                               {"notifications": {"promptsListChanged": True}}, rid=rid)
        out: list[Any] = []
        ready = threading.Event()
        t = threading.Thread(target=_read_all, args=(srv.url, body, headers, out, ready))
        t.start()
        assert ready.wait(10)
        streams.append(out)
        threads.append(t)
    sid = initialize(srv.url)
    legacy: list[Any] = []
    ready = threading.Event()
    t = threading.Thread(target=_read_all, args=(srv.url, None, {
        "accept": "text/event-stream", "mcp-session-id": sid}, legacy, ready, "GET"))
    t.start()
    assert ready.wait(10)
    threads.append(t)
    time.sleep(0.3)
    started = time.monotonic()
    code = srv.stop(timeout=10)
    took = time.monotonic() - started
    for t in threads:
        t.join(10)
    assert code == 0, srv.stderr()
    assert took < 5, f"shutdown took {took:.1f} s"
    for rid, out in zip((1, "two"), streams, strict=True):
        assert out[0] == 200 and out[1]["method"] == "notifications/subscriptions/acknowledged"
        final = out[2]
        assert final["id"] == rid and final["result"]["resultType"] == "complete"
        assert final["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == rid
        assert out[-1] == "ended"
    assert legacy == [200, "ended"]
