"""A push reaching HTTP listeners: from the webhook to ``notifications/prompts/list_changed``.

``promptops serve --http --repo file://BARE@main --poll 1h`` follows a bare repository that
stands in for the team's remote; its poll is an hour, so within a run only the signed
webhook (``POST /hooks/git``, a GitHub push event) can bring a push. A generated package of
N prompts; L listeners hold 2026-07-28 ``subscriptions/listen`` streams. Each run edits one
prompt's description in a developer's clone, commits and pushes (not timed), then posts
the webhook and times, from the webhook's POST:

* ``202``: the webhook's answer (it only schedules the fetch);
* first / last listener: until the first and the last stream carried ``list_changed``;
* served: until ``prompts/get`` of the edited prompt returns the new description.

``tests/serve/transports/http/test_http_remote.py`` proves the webhook brings the push (and
the hourly poll does not); how fast is this script's figure, not a test's.

Usage: python benchmarks/webhook_latency.py [--prompts 1000] [--runs 10] [--listeners 3]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import hmac
import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench_common import (
    GIT_ENV,
    BenchError,
    change_prompt,
    env_info,
    env_lines,
    fmt,
    git,
    make_package,
    md_table,
    median,
    pct,
    promptops_cmd,
)

SECRET = "webhook-latency-bench"
V26 = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": V26,
        "io.modelcontextprotocol/clientCapabilities": {}}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _request(port: int, method: str, path: str, body: bytes = b"",
             headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def _mcp(method: str, params: dict[str, Any] | None = None, rid: str = "1",
         ) -> tuple[bytes, dict[str, str]]:
    body = {"jsonrpc": "2.0", "id": rid, "method": method,
            "params": {**(params or {}), "_meta": META}}
    headers = {"content-type": "application/json",
               "accept": "application/json, text/event-stream",
               "mcp-protocol-version": V26, "mcp-method": method}
    if params and "name" in params:  # the 2026-07-28 era routes by Mcp-Name
        headers["mcp-name"] = params["name"]
    return json.dumps(body).encode(), headers


class Listener:
    """One ``subscriptions/listen`` stream read in a thread; notes when each event came."""

    def __init__(self, port: int, rid: str) -> None:
        self.events: list[float] = []
        self.acked = threading.Event()
        self._conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
        body, headers = _mcp("subscriptions/listen",
                             {"notifications": {"promptsListChanged": True}}, rid)
        self._conn.request("POST", "/mcp", body=body, headers=headers)
        self._resp = self._conn.getresponse()
        if self._resp.status != 200:
            raise BenchError(f"listen answered {self._resp.status}: {self._resp.read()!r}")
        threading.Thread(target=self._read, daemon=True).start()
        if not self.acked.wait(10):
            raise BenchError("no subscriptions/acknowledged within 10 s")

    def _read(self) -> None:
        try:
            while line := self._resp.fp.readline():
                if not line.startswith(b"data: "):
                    continue
                method = json.loads(line[6:]).get("method")
                if method == "notifications/subscriptions/acknowledged":
                    self.acked.set()
                elif method == "notifications/prompts/list_changed":
                    self.events.append(time.perf_counter())
        except (OSError, ValueError, AttributeError):  # closed under the reader: done
            pass

    def close(self) -> None:
        """Shut the socket down before closing: the reader thread is blocked in a read of
        the buffered response, and closing that buffer waits for its lock, so for the
        server's next event on the stream (15 s per listener at the end of every run, 30 s
        of the suite's smoke test); a shutdown ends the blocked read at once."""
        sock = self._conn.sock
        if sock is not None:
            with contextlib.suppress(OSError):  # already closed by the server
                sock.shutdown(socket.SHUT_RDWR)
        self._conn.close()


class Server:
    """``promptops serve --http`` following ``bare`` with an hourly poll and a webhook."""

    def __init__(self, bare: Path, tmp: Path) -> None:
        self.port = _free_port()
        self.log = tmp / "server.log"
        env = {**os.environ, "HOOK_SECRET": SECRET, "XDG_CACHE_HOME": str(tmp / "cache")}
        with self.log.open("wb") as err:
            self.proc = subprocess.Popen(
                [*promptops_cmd(), "serve", "--http", f"127.0.0.1:{self.port}", "--repo",
                 f"file://{bare}@main", "--poll", "1h", "--webhook-secret-env", "HOOK_SECRET"],
                stdout=subprocess.DEVNULL, stderr=err, env=env, cwd=tmp)
        deadline = time.monotonic() + 120
        while True:
            if self.proc.poll() is not None:
                raise BenchError(f"server exited: {self.log.read_text()[-800:]}")
            try:
                if _request(self.port, "GET", "/healthz")[0] == 200:
                    return
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise BenchError(f"server did not start: {self.log.read_text()[-800:]}")
            time.sleep(0.05)

    def description(self, name: str) -> str | None:
        body, headers = _mcp("prompts/get", {"name": name, "arguments": {"topic": "x"}})
        status, raw = _request(self.port, "POST", "/mcp", body, headers)
        if status != 200:
            raise BenchError(f"prompts/get {name} answered {status}: {raw[:300]!r}")
        result = json.loads(raw).get("result") or {}
        return result.get("description")

    def hook(self) -> tuple[float, int]:
        body = json.dumps({"ref": "refs/heads/main"}).encode()
        sig = hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
        t0 = time.perf_counter()
        status, _ = _request(self.port, "POST", "/hooks/git", body,
                             {"content-type": "application/json", "x-github-event": "push",
                              "x-hub-signature-256": f"sha256={sig}"})
        return t0, status

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def one_run(srv: Server, dev: Path, listeners: list[Listener], run: int, timeout: float,
            ) -> dict[str, float]:
    marker = f"pushed in run {run}"
    name = change_prompt(dev, run % 50, marker)
    git(dev, "commit", "-qam", marker)
    git(dev, "push", "-q", "origin", "main")
    seen = [len(x.events) for x in listeners]
    t0, status = srv.hook()
    t_ack = time.perf_counter()
    if status != 202:
        raise BenchError(f"webhook answered {status}")
    deadline = t0 + timeout
    served: float | None = None
    while served is None or any(len(x.events) <= n for x, n in zip(listeners, seen, strict=True)):
        if time.perf_counter() > deadline:
            raise BenchError(f"run {run}: not every listener heard the push within {timeout} s"
                             f"\n{srv.log.read_text()[-800:]}")
        if served is None and srv.description(name) == marker:
            served = time.perf_counter()
        time.sleep(0.002)
    arrivals = [x.events[n] for x, n in zip(listeners, seen, strict=True)]
    return {"ack_ms": (t_ack - t0) * 1e3, "first_ms": (min(arrivals) - t0) * 1e3,
            "last_ms": (max(arrivals) - t0) * 1e3, "served_ms": (served - t0) * 1e3}


def bench(prompts: int, runs: int, listeners: int, timeout: float) -> list[dict[str, float]]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        dev = make_package(prompts, root)
        bare = root / "remote.git"
        subprocess.run(["git", "clone", "--bare", "-q", str(dev), str(bare)], check=True,
                       env=GIT_ENV, capture_output=True)
        git(dev, "remote", "add", "origin", str(bare))
        srv = Server(bare, root)
        streams: list[Listener] = []
        try:
            streams = [Listener(srv.port, f"l{i}") for i in range(listeners)]
            out = []
            for r in range(runs):
                out.append(one_run(srv, dev, streams, r + 1, timeout))
                print(f"  run {r + 1}/{runs}: " + ", ".join(
                    f"{k} {v:.0f}" for k, v in out[-1].items()), file=sys.stderr)
            return out
        finally:
            for s in streams:
                s.close()
            srv.stop()


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--prompts", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--listeners", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=30.0, help="per run, seconds")
    a = ap.parse_args(argv)
    info = env_info()
    results = bench(a.prompts, a.runs, a.listeners, a.timeout)
    load_end = os.getloadavg()
    rows = [["from the webhook's POST to", "median ms", "p90 ms", "max ms"]]
    for key, label in (("ack_ms", "its 202"), ("first_ms", "the first listener's list_changed"),
                       ("last_ms", f"the last of {a.listeners} listeners' list_changed"),
                       ("served_ms", "prompts/get serving the new description")):
        xs = [r[key] for r in results]
        rows.append([label, fmt(median(xs), 0), fmt(pct(xs, 0.9), 0), fmt(max(xs), 0)])
    print("\n".join(env_lines(info, load_end)))
    print(f"\n{a.prompts} prompts, {a.runs} pushes, {a.listeners} listeners, poll 1 h\n")
    print(md_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
