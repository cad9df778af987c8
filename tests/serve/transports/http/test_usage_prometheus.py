"""A real Prometheus scrapes `promptops serve --http`, and PromQL answers the team's questions.

Debian's ``prometheus`` (installed by .ci/run) scrapes the server every second; the
official Python SDK client drives it in both eras under two client names; then the
questions of docs/observability.md are asked through Prometheus's HTTP API: gets per
prompt and version, the prompts nobody fetched, errors by outcome. A machine without
``prometheus`` fails here (it is part of the CI image), it does not skip.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import git
import httpx2
import pytest
from helpers.repo import commit_files, run_cli
from http_helpers import HttpServer, free_port
from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client
from test_sdk import _code  # tests/serve: the error code of an SDK call

SCRAPE = """\
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: promptops
    static_configs:
      - targets: ["127.0.0.1:{port}"]
"""


class Prometheus:
    """``prometheus`` on a free loopback port, its TSDB in a temp dir, until stop()."""

    def __init__(self, target_port: int, root: Path) -> None:
        exe = shutil.which("prometheus")
        assert exe, "prometheus is not installed: `apt-get install -y prometheus` (.ci/run does)"
        root.mkdir(parents=True, exist_ok=True)
        (root / "prometheus.yml").write_text(SCRAPE.format(port=target_port))
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self._log = (root / "prometheus.log").open("wb")
        self.proc = subprocess.Popen(
            [exe, f"--config.file={root / 'prometheus.yml'}",
             f"--storage.tsdb.path={root / 'data'}", f"--web.listen-address=127.0.0.1:{self.port}"],
            stdout=self._log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, self.log(root)
            try:
                if httpx2.get(self.base + "/-/ready", timeout=1).status_code == 200:
                    return
            except httpx2.HTTPError:
                pass
            time.sleep(0.2)
        raise AssertionError("prometheus did not get ready:\n" + self.log(root))

    @staticmethod
    def log(root: Path) -> str:
        return (root / "prometheus.log").read_text(errors="replace")

    def query(self, promql: str) -> list[dict[str, Any]]:
        r = httpx2.get(self.base + "/api/v1/query", params={"query": promql}, timeout=10)
        body = r.json()
        assert body["status"] == "success", body
        return body["data"]["result"]  # type: ignore[no-any-return]

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._log.close()


@pytest.fixture(scope="module")
def served(kit_dir: Path, tmp_path_factory: pytest.TempPathFactory,
           module_env: dict[str, str]) -> Iterator[tuple[HttpServer, Prometheus]]:
    root = tmp_path_factory.mktemp("prom")
    srv = HttpServer([str(kit_dir)], root / "server.log", env=module_env)
    prom = Prometheus(srv.port, root)
    yield srv, prom
    prom.stop()
    assert srv.stop() == 0, srv.stderr()


async def _drive(url: str, mode: str, name: str, gets: int) -> None:
    async with httpx2.AsyncClient(timeout=30) as http, Client(
            streamable_http_client(url, http_client=http), mode=mode, cache=None,
            client_info=types.Implementation(name=name, version="1.0")) as c:
        for _ in range(gets):
            await c.get_prompt("code_review", {"code": "x", "language": "go"})
        await c.get_prompt("p01", {})
        await c.complete(types.PromptReference(type="ref/prompt", name="code_review"),
                         {"name": "language", "value": "g"})
        assert await _code(c.get_prompt("nope", {})) == -32602
        assert await _code(c.get_prompt("broken", {})) == -32603
        assert await _code(c.get_prompt("code_review", {"code": "x"})) == -32602


def _wait_for(prom: Prometheus, promql: str, want: float) -> list[dict[str, Any]]:
    """The query's result once its first sample's value is ``want`` (scrapes are 1s)."""
    deadline = time.monotonic() + 30
    got: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        got = prom.query(promql)
        if got and float(got[0]["value"][1]) == want:
            return got
        time.sleep(0.5)
    raise AssertionError(f"{promql} never reached {want}: {got}")


OURS = 'client=~"claude-code|nightly-agent"'  # the other test's client is not counted here


def test_promql_answers_who_fetches_what(served: tuple[HttpServer, Prometheus]) -> None:
    srv, prom = served
    asyncio.run(_drive(srv.url, "legacy", "claude-code", 3))
    asyncio.run(_drive(srv.url, "auto", "nightly-agent", 2))

    # gets per prompt and version (every client, every era)
    _wait_for(prom, 'sum by (prompt, version) (promptops_prompt_requests_total'
                    f'{{method="prompts/get", prompt="code_review", outcome="ok", {OURS}}})', 5)
    per = prom.query('sum by (package, prompt, version) (promptops_prompt_requests_total'
                     f'{{method="prompts/get", outcome="ok", {OURS}}})')
    assert {(r["metric"]["prompt"], r["metric"]["version"], float(r["value"][1]))
            for r in per} == {("code_review", "1.2.3", 5.0), ("p01", "1.2.3", 2.0)}

    # per client and revision: which client got which version over which protocol
    by_client = prom.query('sum by (client, revision) (promptops_prompt_requests_total'
                           f'{{prompt="code_review", outcome="ok", method="prompts/get", {OURS}}})')
    assert {(r["metric"]["client"], r["metric"]["revision"], float(r["value"][1]))
            for r in by_client} == {("claude-code", "2025-11-25", 3.0),
                                    ("nightly-agent", "2026-07-28", 2.0)}

    # the prompts nobody fetched since the server started
    unused = prom.query('promptops_prompt_served unless on (package, prompt) '
                        'promptops_prompt_requests_total{method="prompts/get"}')
    names = {r["metric"]["prompt"] for r in unused}
    assert "p00" in names and "media" in names
    assert not names & {"code_review", "p01", "broken"}

    # errors by outcome
    errors = prom.query(
        f'sum by (outcome) (promptops_prompt_requests_total{{outcome!="ok", {OURS}}})')
    assert {r["metric"]["outcome"]: float(r["value"][1]) for r in errors} == {
        "not_found": 2.0, "render_error": 2.0, "invalid_arguments": 2.0}

    # p99 render time per prompt, from the histogram
    p99 = prom.query('histogram_quantile(0.99, sum by (le, prompt) '
                     '(promptops_prompt_render_seconds_bucket))')
    assert {r["metric"]["prompt"] for r in p99} >= {"code_review", "p01", "broken"}


def test_promptops_usage_prints_the_report(served: tuple[HttpServer, Prometheus]) -> None:
    srv, _ = served
    asyncio.run(_drive(srv.url, "auto", "report-bot", 1))
    out = run_cli("usage", srv.url)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("usage since ")
    row = next(line for line in lines if line.startswith("kit ") and " code_review " in line)
    assert "1.2.3" in row and "report-bot" in row and "ok " in row
    never = lines[lines.index(next(line for line in lines if line.startswith("never"))) + 1:]
    assert "  kit/p00 1.2.3" in never and not any("code_review" in n for n in never)
    as_json = json.loads(run_cli("usage", srv.base, "--format", "json").stdout)
    assert {"since", "now", "prompts", "never_fetched"} <= set(as_json)
    refused = run_cli("usage", "http://127.0.0.1:1/mcp")
    assert refused.returncode == 1 and "127.0.0.1:1/usage" in refused.stderr


def test_every_dashboard_query_is_promql_prometheus_answers(
        served: tuple[HttpServer, Prometheus]) -> None:
    """docs/grafana-dashboard.json: each panel's query parses and runs (Grafana's
    variables filled in as Grafana would)."""
    _, prom = served
    doc = Path(__file__).parents[4] / "docs" / "grafana-dashboard.json"
    panels = json.loads(doc.read_text(encoding="utf-8"))["panels"]
    exprs = [t["expr"] for p in panels for t in p["targets"]]
    assert len(exprs) >= 8
    for expr in exprs:
        prom.query(expr.replace("$package", ".*").replace("$channel", ".*")
                   .replace("$__rate_interval", "1m"))


def test_a_new_commit_is_a_list_changed_fanout_sample(
        served: tuple[HttpServer, Prometheus], kit_dir: Path) -> None:
    _, prom = served
    commit_files(git.Repo(kit_dir), {"prompts/fresh.prompt.yaml": "description: f\n"
                                     "messages:\n  - role: user\n    text: f\n"}, "add fresh")
    _wait_for(prom, "sum(promptops_list_changed_fanout_seconds_count)", 1)
    unused = prom.query('promptops_prompt_served{prompt="fresh"}')
    assert unused, "the new prompt is served (and so, unused so far)"
