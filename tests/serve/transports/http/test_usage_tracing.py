"""OpenTelemetry spans of `serve --http`, exported over OTLP/HTTP to a real collector.

The collector is ``rotel`` (PyPI: a Rust OpenTelemetry collector shipped as a wheel, so
``pip install`` puts a real collector process on any CI machine with no Docker or Go
toolchain), run with its debug exporter, which prints every span it receives (trace id,
parent id, name, attributes). The server runs with the ``[otel]`` extra and
``OTEL_EXPORTER_OTLP_ENDPOINT`` pointing at it; requests carry a W3C ``traceparent`` in
the 2026-07-28 ``_meta`` and in the HTTP header. Checked: each request's span is the
child of the caller's span, the render a child of the request, the attributes, the
access log's trace id, and that no argument value leaves the process.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import git
import httpx2
import pytest
import rotel
from helpers.repo import commit_files
from http_helpers import HttpServer, free_port, initialize, modern, post
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

SECRET = "SECRET-ARGUMENT-VALUE-7731"
T_META = ("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7")
T_HEADER = ("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331")


def _traceparent(trace: tuple[str, str]) -> str:
    return f"00-{trace[0]}-{trace[1]}-01"


def _spans(text: str) -> list[dict[str, str]]:
    """The spans of rotel's detailed debug log: Trace ID, Parent ID, ID, Name, attributes."""
    spans = []
    for chunk in re.split(r"\nSpan #\d+\n", text)[1:]:
        span: dict[str, str] = {}
        for line in chunk.splitlines():
            m = re.match(r"\s+(Trace ID|Parent ID|ID|Name)\s*:\s*(\S*)", line)
            if m:
                span[m.group(1)] = m.group(2)
            m = re.match(r"\s+-> ([\w.]+): \w+\((.*)\)$", line)
            if m and "Name" in span:
                span[m.group(1)] = m.group(2)
            if line.startswith(("ResourceSpans", "ScopeSpans")):
                break
        spans.append(span)
    return spans


@contextmanager
def _collector(tmp_path: Path) -> Iterator[int]:
    """A rotel collector printing every span it receives to tmp_path/rotel.log; its port."""
    agent = Path(rotel.__file__).with_name("rotel-agent")
    assert agent.exists(), "the rotel wheel has no collector binary"
    http_port, grpc_port = free_port(), free_port()
    log = (tmp_path / "rotel.log").open("wb")
    collector = subprocess.Popen(
        [str(agent), "start", "--exporter", "blackhole", "--debug-log", "traces",
         "--debug-log-verbosity", "detailed", "--otlp-http-endpoint", f"127.0.0.1:{http_port}",
         "--otlp-grpc-endpoint", f"127.0.0.1:{grpc_port}"], stdout=log, stderr=subprocess.STDOUT)
    try:
        yield http_port
    finally:
        collector.terminate()
        collector.wait(10)
        log.close()


def _wait_spans(tmp_path: Path, renders: int) -> str:
    text = ""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        text = (tmp_path / "rotel.log").read_text(errors="replace")
        if text.count("Name           : render") >= renders:
            break
        time.sleep(0.2)
    return text


def test_spans_are_children_of_the_callers_trace(kit_dir: Path, tmp_path: Path,
                                                 module_env: dict[str, str]) -> None:
    with _collector(tmp_path) as http_port:
        srv = HttpServer([str(kit_dir)], tmp_path / "server.log", env={
            **module_env, "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{http_port}",
            "OTEL_BSP_SCHEDULE_DELAY": "100"})
        try:
            args = {"code": SECRET, "language": "go"}
            body, headers = modern("prompts/get", {"name": "code_review", "arguments": args},
                                   name="code_review")
            body["params"]["_meta"]["traceparent"] = _traceparent(T_META)
            assert "result" in post(srv.url, body, headers).json()

            sid = initialize(srv.url)
            r = post(srv.url, {"jsonrpc": "2.0", "id": 1, "method": "prompts/get",
                               "params": {"name": "code_review", "arguments": args}},
                     {"mcp-session-id": sid, "traceparent": _traceparent(T_HEADER)})
            assert "result" in r.json()
            r = post(srv.url, {"jsonrpc": "2.0", "id": 2, "method": "prompts/get",
                               "params": {"name": "broken"}},
                     {"mcp-session-id": sid, "traceparent": _traceparent(T_HEADER)})
            assert r.json()["error"]["code"] == -32603

            repo = git.Repo(kit_dir)  # a new commit: the follower's rebuild is a span
            commit_files(repo, {"prompts/traced.prompt.yaml": "description: t\nmessages:\n"
                                "  - role: user\n    text: t\n"}, "add traced")
            head = repo.head.commit.hexsha
            deadline = time.monotonic() + 30
            while "traced" not in httpx2.get(srv.base + "/usage", timeout=5).text:
                assert time.monotonic() < deadline, srv.stderr()
                time.sleep(0.1)
        finally:
            assert srv.stop() == 0, srv.stderr()
        text = _wait_spans(tmp_path, 3)

    spans = _spans(text)
    gets = [s for s in spans if s.get("Name") == "prompts/get"]
    by_trace = {(s["Trace ID"], s["promptops.prompt"]): s for s in gets}
    for (trace, parent), prompt in ((T_META, "code_review"), (T_HEADER, "code_review"),
                                    (T_HEADER, "broken")):
        span = by_trace[(trace, prompt)]
        assert span["Parent ID"] == parent  # the caller's span
        assert span["promptops.package"] == "kit" and span["promptops.version"] == "1.2.3"
        assert re.fullmatch(r"(sha256:)?[0-9a-f]{64}", span["promptops.digest"])
        assert span["rpc.method"] == "prompts/get"
        render = [s for s in spans if s.get("Name") == "render" and s["Parent ID"] == span["ID"]]
        assert len(render) == 1 and render[0]["Trace ID"] == trace
        # argument validation: a child of the request, inside the render's time
        checked = [s for s in spans
                   if s.get("Name") == "arguments" and s["Parent ID"] == span["ID"]]
        assert len(checked) == 1 and checked[0]["Trace ID"] == trace
    assert by_trace[(T_META[0], "code_review")]["promptops.revision"] == "2026-07-28"
    assert by_trace[(T_HEADER[0], "code_review")]["promptops.revision"] == "2025-11-25"
    assert by_trace[(T_HEADER[0], "code_review")]["promptops.outcome"] == "ok"
    assert by_trace[(T_HEADER[0], "broken")]["promptops.outcome"] == "render_error"
    rebuilds = [s for s in spans if s.get("Name") == "promptops.rebuild"]
    assert [s["promptops.commits"] for s in rebuilds] == [head]
    assert rebuilds[0]["Parent ID"] == ""
    init = [s for s in spans if s.get("Name") == "initialize"]
    assert init and init[0]["Parent ID"] == ""  # no traceparent: a root span
    assert SECRET not in text  # no argument value is exported
    access = (tmp_path / "server.log").read_text()
    assert f'"trace":"{T_META[0]}"' in access.replace(" ", "")
    assert SECRET not in access


@pytest.mark.parametrize("env", [{}, {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9",
                                      "OTEL_SDK_DISABLED": "true"}])
def test_off_means_nothing_is_imported(kit_dir: Path, env: dict[str, str]) -> None:
    """Without the variables (or with the SDK disabled) serve --http imports no OTel SDK."""
    code = ("import sys; from promptops.serve.http import create_app; "
            f"app = create_app([{str(kit_dir)!r}]); "
            "assert app.usage is not None and app.usage.tracing is None; "
            "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))")
    clean = {k: v for k, v in __import__("os").environ.items() if not k.startswith("OTEL_")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**clean, **env}, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_the_official_sdk_clients_trace_context_parents_the_server_span(
        kit_dir: Path, tmp_path: Path, module_env: dict[str, str]) -> None:
    """The Python SDK puts its client span's context in `_meta` (2026-07-28 and session
    era alike); the server's span is that span's child, in the caller's trace."""
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exported = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exported))
    trace.set_tracer_provider(provider)  # the SDK's tracer is a proxy to the global one

    async def drive(url: str, mode: str) -> None:
        async with httpx2.AsyncClient(timeout=30) as http, Client(
                streamable_http_client(url, http_client=http), mode=mode, cache=None) as c:
            await c.get_prompt("p01", {})

    with _collector(tmp_path) as http_port:
        srv = HttpServer([str(kit_dir)], tmp_path / "server.log", env={
            **module_env, "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{http_port}",
            "OTEL_BSP_SCHEDULE_DELAY": "100"})
        try:
            for mode in ("auto", "legacy"):
                asyncio.run(drive(srv.url, mode))
        finally:
            assert srv.stop() == 0, srv.stderr()
        text = _wait_spans(tmp_path, 2)

    client_gets = [s for s in exported.get_finished_spans()
                   if s.kind == trace.SpanKind.CLIENT and "prompts/get" in s.name]
    assert len(client_gets) == 2, [s.name for s in exported.get_finished_spans()]
    server_gets = [s for s in _spans(text) if s.get("Name") == "prompts/get"]
    assert len(server_gets) == 2
    for sent in client_gets:
        ctx = sent.get_span_context()
        assert ctx is not None
        mine = [s for s in server_gets if s["Parent ID"] == format(ctx.span_id, "016x")]
        assert len(mine) == 1 and mine[0]["Trace ID"] == format(ctx.trace_id, "032x")
        assert mine[0]["promptops.prompt"] == "p01"
    assert {s["promptops.revision"] for s in server_gets} == {"2026-07-28", "2025-11-25"}
