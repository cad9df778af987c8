"""Usage metrics of a team server serving several release channels (issue 29): every
`promptops_prompt_requests_total` series and render histogram carries the channel the
request was answered from, `/usage` says per prompt version which channels served it, and
only a channel the server was started with is ever a label value."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from prometheus_client.parser import text_string_to_metric_families
from serve.transports.http.http_helpers import HttpServer
from test_channel_serve import _cli, released

from promptops.commands.usage import table


def test_usage_is_counted_per_channel(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    released(root)  # production: demo@1.0.0
    _cli(root, "promote", "1.0.1", "--to", "staging")
    server = HttpServer([str(root), "--channel", "production", "--channel", "staging"],
                        tmp_path / "server.log", env={"XDG_CACHE_HOME": str(tmp_path / "c")})
    staging = f"{server.base}/channels/staging/mcp"

    async def get(url: str, mode: str) -> str:
        async with httpx2.AsyncClient(timeout=30) as http, Client(
                streamable_http_client(url, http_client=http), mode=mode, cache=None) as c:
            got = await c.get_prompt("greet", {"topic": "t"})
            return str(got.model_dump(by_alias=True)["_meta"]["promptops/channel"])

    async def run() -> tuple[list[str], str, str, int]:
        seen = [await get(server.url, "legacy"), await get(server.url, "auto"),
                await get(staging, "auto"),
                await get(f"{server.base}/channels/production/mcp", "legacy")]
        async with httpx2.AsyncClient(timeout=10) as plain:
            canary = f"{server.base}/channels/canary/mcp"
            missing = (await plain.post(canary, json={})).status_code
            return (seen, (await plain.get(f"{server.base}/metrics")).text,
                    (await plain.get(f"{server.base}/usage")).text, missing)

    try:
        seen, metrics, usage, missing = asyncio.run(run())
    finally:
        assert server.stop() == 0, server.stderr()
    assert seen == ["production", "production", "staging", "production"] and missing == 404
    families = {f.name: f for f in text_string_to_metric_families(metrics)}
    gets: Counter[tuple[str, str]] = Counter()
    for s in families["promptops_prompt_requests"].samples:  # summed over era and client
        if s.name.endswith("_total") and s.labels["method"] == "prompts/get":
            gets[(s.labels["channel"], s.labels["version"])] += int(s.value)
    assert gets == {("production", "1.0.0"): 3, ("staging", "1.0.1"): 1}
    renders = {(s.labels["channel"], s.labels["version"]): s.value
               for s in families["promptops_prompt_render_seconds"].samples
               if s.name.endswith("_count")}
    assert renders == {("production", "1.0.0"): 3, ("staging", "1.0.1"): 1}
    channels = {s.labels.get("channel") for f in families.values() for s in f.samples} - {None}
    assert channels == {"production", "staging"}  # only the server's own channels
    rows = {r["version"]: r for r in json.loads(usage)["prompts"]}
    assert rows["1.0.0"]["channels"] == {"production": 3}
    assert rows["1.0.1"]["channels"] == {"staging": 1}
    lines = table(json.loads(usage))  # `promptops usage URL`: a CHANNELS column
    assert lines[2].split()[-2:] == ["CHANNELS", "CLIENTS"]
    assert any(" production 3 " in line for line in lines)
