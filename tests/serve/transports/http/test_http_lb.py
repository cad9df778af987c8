"""Two replicas behind a real load balancer (HAProxy, and nginx, from Debian).

The replicas follow the same repository and share a signing key: at one commit they
answer identically, so 2026-07-28 requests are spread round-robin and a cursor issued by
one replica works on the other; session-era clients need affinity on Mcp-Session-Id
(HAProxy learns it from the initialize response; nginx OSS cannot, so replicas mint
ids tagged with --replica-id and nginx routes on the tag). Both replicas pick up a new
commit. The configs are the ones docs/http.md documents.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import git
import httpx2
import pytest
from helpers.repo import commit_files
from http_helpers import HttpServer, free_port, initialize, modern, post, wait_healthy
from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client

HAPROXY = """\
global
    maxconn 4096
defaults
    mode http
    timeout connect 2s
    timeout client  1h
    timeout server  1h
    timeout http-request 10s
frontend mcp
    bind 127.0.0.1:{port}
    default_backend replicas
backend replicas
    balance roundrobin
{stick}    server r1 127.0.0.1:{r1}
    server r2 127.0.0.1:{r2}
"""
STICK = """\
    stick-table type string len 128 size 100k expire 30m
    stick store-response res.hdr(mcp-session-id)
    stick match req.hdr(mcp-session-id)
"""
NGINX = """\
daemon off;
worker_processes 1;
pid nginx.pid;
error_log logs/error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path tmp/body; proxy_temp_path tmp/proxy; fastcgi_temp_path tmp/fcgi;
    uwsgi_temp_path tmp/uwsgi; scgi_temp_path tmp/scgi;
    upstream r1 {{ server 127.0.0.1:{r1}; }}
    upstream r2 {{ server 127.0.0.1:{r2}; }}
    upstream any_replica {{ server 127.0.0.1:{r1}; server 127.0.0.1:{r2}; }}
    map $http_mcp_session_id $mcp_replica {{
        "~^(?<tag>r[0-9]+)\\."  $tag;
        default                any_replica;
    }}
    server {{
        listen 127.0.0.1:{port};
        proxy_http_version 1.1;
        proxy_set_header Connection "";
        proxy_set_header Host $http_host;
        proxy_buffering off;
        proxy_read_timeout 1h;
        location /mcp {{ proxy_pass http://$mcp_replica; }}
    }}
}}
"""

def _which(name: str) -> str:
    found = shutil.which(name) or f"/usr/sbin/{name}"
    assert Path(found).exists(), f"{name} is not installed (apt-get install {name})"
    return found


class Proxy:
    def __init__(self, cmd: list[str], port: int, cwd: Path) -> None:
        self.port = port
        self.url = f"http://127.0.0.1:{port}/mcp"
        self.proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL,
                                     stderr=(cwd / "proxy.err").open("wb"))
        wait_healthy(f"http://127.0.0.1:{port}", self.proc,
                     lambda: (cwd / "proxy.err").read_text(), timeout=10)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


@pytest.fixture(scope="module")
def replicas(kit_dir: Path, tmp_path_factory: pytest.TempPathFactory,
             module_env: dict[str, str]) -> Iterator[list[HttpServer]]:
    tmp = tmp_path_factory.mktemp("replicas")
    key = tmp / "key"
    key.write_bytes(b"k" * 48)
    made = [HttpServer([str(kit_dir), "--page-size", "4", "--key-file", str(key),
                        "--replica-id", f"r{i}"], tmp / f"r{i}.log", env=module_env)
            for i in (1, 2)]
    yield made
    for r in made:
        assert r.stop() == 0, r.stderr()


def _haproxy(replicas: list[HttpServer], tmp: Path, sticky: bool) -> Proxy:
    port = free_port()
    cfg = tmp / "haproxy.cfg"
    cfg.write_text(HAPROXY.format(port=port, r1=replicas[0].port, r2=replicas[1].port,
                                  stick=STICK if sticky else ""))
    return Proxy([_which("haproxy"), "-f", str(cfg), "-db"], port, tmp)


@pytest.fixture(scope="module")
def haproxy(replicas: list[HttpServer], tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[Proxy]:
    proxy = _haproxy(replicas, tmp_path_factory.mktemp("haproxy"), sticky=True)
    yield proxy
    proxy.stop()


async def _client_check(url: str, mode: str) -> tuple[str, list[str]]:
    async with httpx2.AsyncClient(timeout=30) as http, Client(
            streamable_http_client(url, http_client=http), mode=mode, cache=None) as c:
        names, cursor = [], None
        while True:  # four prompts a page: the pages come from both replicas
            page = await c.list_prompts(cursor=cursor) if cursor else await c.list_prompts()
            names += [p.name for p in page.prompts]
            cursor = page.next_cursor
            if not cursor:
                break
        got = await c.get_prompt("code_review", {"code": "x", "language": "go"})
        assert got.messages[1].content.text == "Review this go code (pep8):\nx"  # type: ignore[union-attr]
        comp = await c.complete(types.PromptReference(type="ref/prompt", name="code_review"),
                                {"name": "language", "value": "g"})
        assert comp.completion.values == ["go"]
        return str(c.protocol_version), names


def _hits(replica: HttpServer) -> int:
    return replica.stderr().count('"verb":"POST"')


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_sdk_clients_through_haproxy(haproxy: Proxy, replicas: list[HttpServer],
                                     mode: str) -> None:
    before = [_hits(r) for r in replicas]
    results = [asyncio.run(_client_check(haproxy.url, mode)) for _ in range(3)]
    assert {v for v, _ in results} == {"2026-07-28" if mode == "auto" else "2025-11-25"}
    assert len({tuple(n) for _, n in results}) == 1 and len(results[0][1]) >= 15
    time.sleep(0.2)
    after = [_hits(r) for r in replicas]
    assert all(a > b for a, b in zip(after, before, strict=True)), (before, after)


def test_cursor_from_one_replica_works_on_the_other(replicas: list[HttpServer]) -> None:
    b, h = modern("prompts/list")
    first = post(replicas[0].url, b, h).json()["result"]
    b2, h2 = modern("prompts/list", {"cursor": first["nextCursor"]})
    on_other = post(replicas[1].url, b2, h2).json()["result"]
    on_same = post(replicas[0].url, b2, h2).json()["result"]
    assert on_other == on_same and on_other["prompts"] != first["prompts"]
    # the same for a session on each replica
    s1, s2 = initialize(replicas[0].url), initialize(replicas[1].url)
    page1 = post(replicas[0].url, {"jsonrpc": "2.0", "id": 1, "method": "prompts/list"},
                 {"mcp-session-id": s1}).json()["result"]
    page2 = post(replicas[1].url, {"jsonrpc": "2.0", "id": 2, "method": "prompts/list",
                                   "params": {"cursor": page1["nextCursor"]}},
                 {"mcp-session-id": s2}).json()
    assert "result" in page2 and page2["result"]["prompts"][0]["name"] > \
        page1["prompts"][-1]["name"]


def test_without_affinity_legacy_sessions_break(replicas: list[HttpServer], tmp_path: Path
                                                ) -> None:
    """The negative control: the same LB without the stick lines loses sessions."""
    proxy = _haproxy(replicas, tmp_path, sticky=False)
    try:
        lost = 0
        for _ in range(4):
            with httpx2.Client(timeout=10) as c:
                r = c.post(proxy.url, json={"jsonrpc": "2.0", "id": 0, "method": "initialize",
                                            "params": {"protocolVersion": "2025-11-25",
                                                       "capabilities": {}}})
                sid = r.headers["mcp-session-id"]
                r = c.post(proxy.url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                           headers={"mcp-session-id": sid})
                lost += r.status_code == 404
        assert lost >= 2
    finally:
        proxy.stop()


def test_legacy_sessions_through_nginx_replica_tags(replicas: list[HttpServer],
                                                   tmp_path: Path) -> None:
    nginx = _which("nginx")
    for d in ("logs", "tmp"):
        (tmp_path / d).mkdir()
    port = free_port()
    (tmp_path / "nginx.conf").write_text(NGINX.format(port=port, r1=replicas[0].port,
                                                      r2=replicas[1].port))
    proxy = Proxy([nginx, "-p", str(tmp_path), "-c", "nginx.conf"], port, tmp_path)
    try:
        results = [asyncio.run(_client_check(proxy.url, "legacy")) for _ in range(3)]
        assert {v for v, _ in results} == {"2025-11-25"}
        modern_ok = asyncio.run(_client_check(proxy.url, "auto"))
        assert modern_ok[0] == "2026-07-28"
    finally:
        proxy.stop()


def test_both_replicas_pick_up_a_new_commit(haproxy: Proxy, replicas: list[HttpServer],
                                            kit_dir: Path) -> None:
    async def listen_and_commit() -> None:
        async with httpx2.AsyncClient(timeout=30) as http, Client(
                streamable_http_client(haproxy.url, http_client=http), mode="auto",
                cache=None) as c, c.listen(prompts_list_changed=True) as sub:
            await asyncio.to_thread(commit_files, git.Repo(kit_dir), {
                "prompts/from_lb.prompt.yaml": "description: lb\nmessages:\n"
                                               "  - role: user\n    text: lb\n"}, "lb")
            async with asyncio.timeout(10):
                async for _ in sub:
                    break

    asyncio.run(listen_and_commit())
    deadline = time.monotonic() + 10
    for r in replicas:
        while True:
            b, h = modern("prompts/get", {"name": "from_lb"}, name="from_lb")
            if post(r.url, b, h).status_code == 200:
                break
            assert time.monotonic() < deadline, r.stderr()
            time.sleep(0.05)
