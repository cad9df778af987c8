"""`serve --http --ui`: the prompt page shows the server's own request counts for the prompt.

A real server with two teams' tokens; the official MCP SDK client fetches a prompt over
streamable HTTP as team A (twice, and once with a missing argument), then team A's page
for that prompt shows those counts per version, and team B still cannot open it.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx2
import pytest
from helpers.repo import cli_env
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from ui_helpers import make_package


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _fetch(url: str, token: str) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(timeout=30, headers=headers) as http, Client(
            streamable_http_client(url, http_client=http)) as c:
        for _ in range(2):
            await c.get_prompt("commit_message", {"changes": "fix parse()"})
        with pytest.raises(Exception, match="changes"):  # the SDK's error for the JSON-RPC one
            await c.get_prompt("commit_message", {})


class Server:
    """`serve --http --ui` over the UI test package with two teams' tokens, until stop()."""

    def __init__(self, tmp_path: Path) -> None:
        pkg = tmp_path / "pkg"
        make_package(pkg)
        tokens = tmp_path / "tokens.toml"
        digest = {t: hashlib.sha256(t.encode()).hexdigest() for t in ("token-a", "token-b")}
        tokens.write_text(
            f'[[tokens]]\nname = "team-a"\nsha256 = "{digest["token-a"]}"\n'
            'see = ["starter-prompts/commit_*"]\n\n'
            f'[[tokens]]\nname = "team-b"\nsha256 = "{digest["token-b"]}"\n'
            'see = ["starter-prompts/code_*"]\n')
        self.port = _free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log_path = tmp_path / "serve.log"
        self.log = self.log_path.open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "promptops", "serve", "--http", f"127.0.0.1:{self.port}",
             str(pkg), "--tokens", str(tokens), "--ui", "--shutdown-timeout", "2s"],
            stdout=subprocess.DEVNULL, stderr=self.log, env=cli_env())
        deadline = time.monotonic() + 60
        while True:
            assert self.proc.poll() is None, self.log_path.read_text()
            try:
                if httpx2.get(self.base + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx2.HTTPError:
                pass
            assert time.monotonic() < deadline, "serve --http did not start"
            time.sleep(0.1)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def test_a_browser_logs_in_with_its_token_and_gets_a_session_cookie(tmp_path: Path) -> None:
    srv = Server(tmp_path)
    base = srv.base
    html = {"accept": "text/html"}
    same = {"origin": base}
    try:
        page = httpx2.get(base + "/", headers=html, timeout=10)
        assert page.status_code == 401 and 'id="login"' in page.text  # the way in
        assert httpx2.get(base + "/", timeout=10).status_code == 401  # a non-browser: JSON
        assert httpx2.get(base + "/static/ui.css", timeout=10).status_code == 200
        form = {"token": "token-a"}
        assert httpx2.post(base + "/login", data=form, timeout=10).status_code == 403
        assert httpx2.post(base + "/login", data=form, timeout=10,
                           headers={"origin": "http://127.0.0.1:1"}).status_code == 403
        bad = httpx2.post(base + "/login", data={"token": "nope"}, headers=same, timeout=10)
        assert bad.status_code == 401 and "not accepted" in bad.text
        assert "set-cookie" not in bad.headers
        ok = httpx2.post(base + "/login", data=form, headers=same, timeout=10)
        assert ok.status_code == 303 and ok.headers["location"] == "/"
        cookie = ok.headers["set-cookie"]
        attrs = [a.strip() for a in cookie.split(";")]
        assert {"HttpOnly", "SameSite=Strict", "Path=/"} <= set(attrs)
        assert "Secure" not in attrs  # plain http on loopback; https adds it
        assert "token-a" not in cookie  # a random session id, never the token
        sid = attrs[0]
        jar = {"cookie": sid, **html}
        catalog = httpx2.get(base + "/", headers=jar, timeout=10)
        assert catalog.status_code == 200
        names = re.findall(r"<code>([a-z_]+)</code>", catalog.text)
        assert "commit_message" in names and "code_review" not in names  # team A's view
        assert httpx2.get(base + "/prompt/starter-prompts/code_review", headers=jar,
                          timeout=10).status_code == 404
        # the cookie admits the UI only: /mcp still wants the bearer token
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}
        mcp = httpx2.post(base + "/mcp", json=init, timeout=10, headers={
            "cookie": sid, "accept": "application/json, text/event-stream"})
        assert mcp.status_code == 401
        out = httpx2.post(base + "/logout", headers={**same, "cookie": sid}, timeout=10)
        assert out.status_code == 303 and "Max-Age=0" in out.headers["set-cookie"]
        assert httpx2.get(base + "/", headers=jar, timeout=10).status_code == 401
    finally:
        srv.stop()


def test_the_prompt_page_shows_this_servers_request_counts(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    make_package(pkg)
    tokens = tmp_path / "tokens.toml"
    digest = {t: hashlib.sha256(t.encode()).hexdigest() for t in ("token-a", "token-b")}
    tokens.write_text(
        f'[[tokens]]\nname = "team-a"\nsha256 = "{digest["token-a"]}"\n'
        'see = ["starter-prompts/commit_*"]\n\n'
        f'[[tokens]]\nname = "team-b"\nsha256 = "{digest["token-b"]}"\n'
        'see = ["starter-prompts/code_*"]\n')
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    log = (tmp_path / "serve.log").open("wb")
    proc = subprocess.Popen([sys.executable, "-m", "promptops", "serve", "--http",
                             f"127.0.0.1:{port}", str(pkg), "--tokens", str(tokens), "--ui",
                             "--shutdown-timeout", "2s"],
                            stdout=subprocess.DEVNULL, stderr=log, env=cli_env())
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, (tmp_path / "serve.log").read_text()
            try:
                if httpx2.get(base + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx2.HTTPError:
                pass
            assert time.monotonic() < deadline, "serve --http did not start"
            time.sleep(0.1)

        def page(token: str) -> httpx2.Response:
            return httpx2.get(base + "/prompt/starter-prompts/commit_message", timeout=10,
                              headers={"Authorization": f"Bearer {token}"})

        before = page("token-a")
        assert before.status_code == 200
        assert "No requests for this prompt yet." in before.text
        asyncio.run(_fetch(base + "/mcp", "token-a"))
        after = page("token-a")
        assert after.status_code == 200
        row = re.search(r'<table id="requests">.*?<tbody>(.*?)</tbody>', after.text, re.S)
        assert row, after.text
        assert row.group(1) == ('<tr><th scope="row">0.1.0</th><td>3</td><td>0</td>'
                                '<td>invalid_arguments: 1, ok: 2</td></tr>')
        assert "team-a" not in after.text  # who fetched it is not on the page
        assert page("token-b").status_code == 404  # not team B's prompt, counts or not
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
