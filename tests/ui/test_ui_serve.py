"""`serve --http --ui`: the prompt page shows the server's own request counts for the prompt.

A real server with two teams' tokens; the official MCP SDK client fetches a prompt over
streamable HTTP as team A (twice, and once with a missing argument), then team A's page
for that prompt shows those counts per version, and team B still cannot open it.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from ui_helpers import Serve


async def _fetch(url: str, token: str) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(timeout=30, headers=headers) as http, Client(
            streamable_http_client(url, http_client=http)) as c:
        for _ in range(2):
            await c.get_prompt("commit_message", {"changes": "fix parse()"})
        with pytest.raises(Exception, match="changes"):  # the SDK's error for the JSON-RPC one
            await c.get_prompt("commit_message", {})


def test_a_browser_logs_in_with_its_token_and_gets_a_session_cookie(tmp_path: Path) -> None:
    srv = Serve(tmp_path)
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
        for forged in ({"origin": "null"},  # a sandboxed frame, a data: page
                       {"origin": base, "sec-fetch-site": "cross-site"},
                       {"origin": "null", "sec-fetch-site": "same-site"}):
            refused = httpx2.post(base + "/login", data=form, headers=forged, timeout=10)
            assert refused.status_code == 403, forged
            assert "set-cookie" not in refused.headers
        # a page of ours sent with Referrer-Policy: no-referrer posts Origin: null
        null_ok = httpx2.post(base + "/login", data={"token": "nope"}, timeout=10,
                              headers={"origin": "null", "sec-fetch-site": "same-origin"})
        assert null_ok.status_code == 401  # past the origin check, to the token check
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
        assert catalog.status_code == 200 and 'id="sign-out"' in catalog.text
        bearer = httpx2.get(base + "/", timeout=10, headers={"authorization": "Bearer token-a"})
        assert bearer.status_code == 200 and 'id="sign-out"' not in bearer.text  # no session
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
    srv = Serve(tmp_path)
    base = srv.base
    try:
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
        srv.stop()
