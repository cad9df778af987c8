"""Per-prompt usage of ``serve --http`` (issue 29): counted, bounded, reported.

In-process: the app ``serve --http`` builds, driven through its ASGI interface with the
requests a client sends (the process and the official SDK clients are exercised against
a real Prometheus in test_usage_prometheus.py). 100,000 hostile prompt and client names
must leave ``/metrics`` a few KB: every label value is one the served bundle knows, one
of the first few client names, or ``other``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from promptops.serve.http import build
from promptops.serve.options import ServeOptions
from promptops.serve.transports.http import HttpApp
from promptops.serve.usage import MAX_CLIENTS

V26 = "2026-07-28"


def _app(*paths: Path) -> HttpApp:
    return build(ServeOptions.parse(["--http=", "--no-access-log", *map(str, paths)]))


class Asgi:
    """Requests through the app's ASGI callable, as uvicorn would make them."""

    def __init__(self, app: HttpApp) -> None:
        self.app = app

    async def request(self, verb: str, path: str, body: bytes = b"",
                      headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
        hdrs = {"host": "127.0.0.1:8080", **(headers or {})}
        scope = {"type": "http", "method": verb, "path": path, "query_string": b"",
                 "headers": [(k.encode(), v.encode()) for k, v in hdrs.items()],
                 "client": ("127.0.0.1", 5000), "server": ("127.0.0.1", 8080)}
        sent = False
        out: dict[str, Any] = {"body": b""}

        async def receive() -> dict[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            await asyncio.sleep(3600)
            return {"type": "http.disconnect"}

        async def send(msg: dict[str, Any]) -> None:
            if msg["type"] == "http.response.start":
                out["status"] = msg["status"]
                out["headers"] = {k.decode(): v.decode() for k, v in msg["headers"]}
            else:
                out["body"] += msg.get("body", b"")

        await self.app(scope, receive, send)
        return out["status"], out["headers"], out["body"]

    async def modern(self, method: str, params: dict[str, Any], client: str | None = None,
                     name: str | None = None) -> dict[str, Any]:
        meta: dict[str, Any] = {"io.modelcontextprotocol/protocolVersion": V26,
                                "io.modelcontextprotocol/clientCapabilities": {}}
        if client is not None:
            meta["io.modelcontextprotocol/clientInfo"] = {"name": client, "version": "1"}
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}}
        headers = {"content-type": "application/json", "accept": "application/json",
                   "mcp-protocol-version": V26, "mcp-method": method}
        if name is not None:
            headers["mcp-name"] = name
        _, _, data = await self.request("POST", "/mcp", json.dumps(body).encode(), headers)
        return json.loads(data)  # type: ignore[no-any-return]

    async def get(self, name: str, args: dict[str, str] | None = None,
                  client: str | None = "agent") -> dict[str, Any]:
        return await self.modern("prompts/get", {"name": name, "arguments": args or {}},
                                 client, name)

    async def text(self, path: str) -> str:
        status, _, body = await self.request("GET", path)
        assert status == 200, body
        return body.decode()


def _series(text: str, family: str) -> list[tuple[dict[str, str], float]]:
    return [(s.labels, s.value) for f in text_string_to_metric_families(text)
            for s in f.samples if s.name == family]


GOOD = {"code": "x = 1", "language": "python"}


@pytest.fixture()
def client(kit_dir: Path) -> Asgi:
    return Asgi(_app(kit_dir))


def test_gets_are_counted_per_prompt_version_outcome_and_client(client: Asgi) -> None:
    async def go() -> str:
        assert "result" in await client.get("code_review", GOOD)
        assert "result" in await client.get("code_review", GOOD, client="claude-code")
        assert "error" in await client.get("code_review", {"code": "x"})  # language missing
        assert "error" in await client.get("broken")  # 1 / 0
        assert "error" in await client.get("nope")
        done = await client.modern("completion/complete", {
            "ref": {"type": "ref/prompt", "name": "code_review"},
            "argument": {"name": "language", "value": "py"}}, "agent")
        assert done["result"]["completion"]["values"] == ["python"]
        return await client.text("/metrics")

    text = asyncio.run(go())
    got = {(s["method"], s["prompt"], s["version"], s["outcome"], s["client"]): v
           for s, v in _series(text, "promptops_prompt_requests_total")}
    assert got == {
        ("prompts/get", "code_review", "1.2.3", "ok", "agent"): 1,
        ("prompts/get", "code_review", "1.2.3", "ok", "claude-code"): 1,
        ("prompts/get", "code_review", "1.2.3", "invalid_arguments", "agent"): 1,
        ("prompts/get", "broken", "1.2.3", "render_error", "agent"): 1,
        ("prompts/get", "other", "other", "not_found", "agent"): 1,
        ("completion/complete", "code_review", "1.2.3", "ok", "agent"): 1,
    }
    for s, _ in _series(text, "promptops_prompt_requests_total"):
        assert s["package"] == ("other" if s["prompt"] == "other" else "kit")
        assert s["revision"] == V26 and s["principal"] == ""
    counts = {s["prompt"]: v for s, v in _series(text, "promptops_prompt_render_seconds_count")}
    assert counts == {"code_review": 3, "broken": 1}
    served = {s["prompt"] for s, _ in _series(text, "promptops_prompt_served")}
    assert {"code_review", "broken", "media", "p00"} <= served


def test_the_session_era_client_is_its_initialize_clientinfo(client: Asgi) -> None:
    async def go() -> str:
        client.app.loop = asyncio.get_running_loop()  # what the lifespan start would set
        hdrs = {"content-type": "application/json", "accept": "application/json"}
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "cursor", "version": "1"}}}
        status, headers, _ = await client.request("POST", "/mcp", json.dumps(init).encode(),
                                                  hdrs)
        assert status == 200
        sid = {**hdrs, "mcp-session-id": headers["mcp-session-id"]}
        get = {"jsonrpc": "2.0", "id": 1, "method": "prompts/get",
               "params": {"name": "code_review", "arguments": GOOD}}
        status, _, body = await client.request("POST", "/mcp", json.dumps(get).encode(), sid)
        assert status == 200 and b'"result"' in body
        return await client.text("/metrics")

    text = asyncio.run(go())
    rows = _series(text, "promptops_prompt_requests_total")
    assert [(s["client"], s["revision"], s["outcome"]) for s, _ in rows] == [
        ("cursor", "2025-06-18", "ok")]


def test_a_hundred_thousand_hostile_names_leave_metrics_a_few_kb(client: Asgi) -> None:
    headers = {"content-type": "application/json", "accept": "application/json",
               "mcp-protocol-version": V26, "mcp-method": "prompts/get"}

    def body(prompt: str, who: str) -> bytes:
        return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "prompts/get", "params": {
            "name": prompt, "arguments": {}, "_meta": {
                "io.modelcontextprotocol/protocolVersion": V26,
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": who, "version": "1"}}}}).encode()

    async def go() -> tuple[str, str, int]:
        ok = 0
        for i in range(50_000):  # 100,000 distinct names: a prompt and a client each
            prompt, who = (f'evil-{i}"}} {{x="1', f"c{i}") if i % 10 else ("p00", f"bot-{i}")
            _, _, data = await client.request("POST", "/mcp", body(prompt, who),
                                              {**headers, "mcp-name": prompt})
            ok += (b'"result"' if prompt == "p00" else b"unknown prompt") in data
        return await client.text("/metrics"), await client.text("/usage"), ok

    text, report, ok = asyncio.run(go())
    assert ok == 50_000  # every request reached the server and was answered as it should
    assert len(text.encode()) < 16_000, len(text.encode())
    rows = _series(text, "promptops_prompt_requests_total")
    clients = {s["client"] for s, _ in rows}
    assert len(clients) <= MAX_CLIENTS + 1 and "other" in clients
    assert {s["prompt"] for s, _ in rows} == {"p00", "other"}
    assert sum(v for _, v in rows) == 50_000
    assert len(report.encode()) < 16_000
    assert "evil" not in text and "evil" not in report


def test_the_usage_report_says_what_was_fetched_and_what_never_was(client: Asgi) -> None:
    async def go() -> str:
        for _ in range(3):
            await client.get("code_review", GOOD)
        await client.get("p01", client="cursor")
        return await client.text("/usage")

    report = json.loads(asyncio.run(go()))
    top = report["prompts"][0]
    assert (top["package"], top["prompt"], top["version"], top["gets"]) == (
        "kit", "code_review", "1.2.3", 3)
    assert top["outcomes"] == {"ok": 3} and top["clients"] == {"agent": 3}
    never = {(r["package"], r["prompt"]) for r in report["never_fetched"]}
    assert ("kit", "p00") in never and ("kit", "broken") in never
    assert ("kit", "code_review") not in never and ("kit", "p01") not in never
    assert report["since"].endswith("Z")


def test_with_tokens_the_principal_is_a_label_and_hidden_prompts_are_other(
        kit_dir: Path, tmp_path: Path) -> None:
    tokens = {"team-a": "token-of-team-a-0123456789", "ops": "token-of-ops-0123456789"}
    (tmp_path / "tokens.json").write_text(json.dumps({"tokens": [
        {"name": "team-a", "sha256": hashlib.sha256(tokens["team-a"].encode()).hexdigest(),
         "see": ["kit/p0*"]},
        {"name": "ops", "sha256": hashlib.sha256(tokens["ops"].encode()).hexdigest()}]}))
    app = build(ServeOptions.parse(["--http=", "--no-access-log", "--tokens",
                                    str(tmp_path / "tokens.json"), str(kit_dir)]))
    client = Asgi(app)

    async def go(token: str, prompt: str) -> dict[str, Any]:
        body = {"jsonrpc": "2.0", "id": 1, "method": "prompts/get", "params": {
            "name": prompt, "arguments": GOOD if prompt == "code_review" else {}, "_meta": {
                "io.modelcontextprotocol/protocolVersion": V26,
                "io.modelcontextprotocol/clientCapabilities": {}}}}
        _, _, data = await client.request("POST", "/mcp", json.dumps(body).encode(), {
            "content-type": "application/json", "accept": "application/json",
            "mcp-protocol-version": V26, "mcp-method": "prompts/get", "mcp-name": prompt,
            "authorization": f"Bearer {token}"})
        return json.loads(data)  # type: ignore[no-any-return]

    async def run() -> str:
        assert "result" in await go(tokens["team-a"], "p01")
        assert "error" in await go(tokens["team-a"], "code_review")  # not in team-a's view
        assert "result" in await go(tokens["ops"], "code_review")
        # /usage names every prompt, client and principal: only for a grant of everything
        def auth(who: str) -> dict[str, str]:
            return {"authorization": f"Bearer {tokens[who]}"}

        assert (await client.request("GET", "/usage"))[0] == 401
        narrow, _, why = await client.request("GET", "/usage", headers=auth("team-a"))
        assert narrow == 403 and b"code_review" not in why and b"sees every prompt" in why
        full, _, report = await client.request("GET", "/usage", headers=auth("ops"))
        assert full == 200 and b"code_review" in report
        return await client.text("/metrics")

    got = {(s["principal"], s["prompt"], s["outcome"])
           for s, _ in _series(asyncio.run(run()), "promptops_prompt_requests_total")}
    assert got == {("team-a", "p01", "ok"), ("team-a", "other", "not_found"),
                   ("ops", "code_review", "ok")}


@pytest.mark.parametrize("shape", ["per-prompt", "catalog"])
def test_a_tools_call_of_a_prompt_is_counted_as_a_use_of_that_prompt(kit_dir: Path,
                                                                     shape: str) -> None:
    """`serve --tools`: a tools/call that renders a prompt is counted under
    method="tools/call" with that prompt's labels and the same outcomes as prompts/get (a
    failure the tool reports with isError included); list_prompts uses no prompt."""
    client = Asgi(build(ServeOptions.parse(["--http=", "--no-access-log", "--tools", shape,
                                            str(kit_dir)])))

    def call(prompt: str, args: dict[str, str]) -> tuple[str, dict[str, Any]]:
        if shape == "per-prompt":
            return prompt, {"name": prompt, "arguments": args}
        return "get_prompt", {"name": "get_prompt",
                              "arguments": {"name": prompt, "arguments": args}}

    async def go() -> tuple[str, str]:
        for prompt, args, failed in (("code_review", GOOD, False),
                                     ("code_review", {"code": "x"}, True),  # language missing
                                     ("broken", {}, True)):  # 1 / 0
            tool, params = call(prompt, args)
            out = await client.modern("tools/call", params, "agent", tool)
            assert out["result"].get("isError", False) is failed, out
        tool, params = call("nope", {})
        out = await client.modern("tools/call", params, "agent", tool)
        assert "error" in out or out["result"]["isError"]  # unknown tool / unknown prompt
        if shape == "catalog":
            out = await client.modern("tools/call", {"name": "list_prompts", "arguments": {}},
                                      "agent", "list_prompts")
            assert "result" in out
        return await client.text("/metrics"), await client.text("/usage")

    text, report = asyncio.run(go())
    got = {(s["method"], s["prompt"], s["outcome"], s["client"]): v
           for s, v in _series(text, "promptops_prompt_requests_total")}
    assert got == {
        ("tools/call", "code_review", "ok", "agent"): 1,
        ("tools/call", "code_review", "invalid_arguments", "agent"): 1,
        ("tools/call", "broken", "render_error", "agent"): 1,
        ("tools/call", "other", "not_found", "agent"): 1,
    }
    counts = {s["prompt"]: v for s, v in _series(text, "promptops_prompt_render_seconds_count")}
    assert counts == {"code_review": 2, "broken": 1}
    rows = {r["prompt"]: r for r in json.loads(report)["prompts"]}
    assert rows["code_review"]["tool_calls"] == 2 and rows["code_review"]["gets"] == 0
    never = {r["prompt"] for r in json.loads(report)["never_fetched"]}
    assert "code_review" not in never and "broken" not in never and "p00" in never


def test_the_inlined_get_counts_exactly_as_the_general_path(kit_dir: Path) -> None:
    """``Usage._get`` (a ``prompts/get`` without a span, issue 26) inlines ``_count``'s
    look-ups; on the same requests - known, unknown and non-string names, every shape of
    client name, a principal, a failing and an input-required handler - both leave the
    same counts, latency rows (their number of observations: the buckets are times)
    and bounded name sets."""
    from promptops.errors import TemplateError
    from promptops.serve.jsonrpc import RpcError
    from promptops.serve.methods import Call, Settings
    from promptops.serve.revisions import STATELESS
    from promptops.serve.session import Session
    from promptops.serve.usage import PRINCIPAL, Usage

    app = _app(kit_dir)
    server = app.views.everything
    snap = server.catalog.snapshot
    known = snap.names[0]

    def ok(*_: object) -> dict[str, object]:
        return {"messages": []}

    def asks(*_: object) -> dict[str, object]:
        return {"resultType": "input_required"}

    def bad(*_: object) -> dict[str, object]:
        raise RpcError(-32602, "no")

    def broken(*_: object) -> dict[str, object]:
        raise TemplateError("boom")

    infos: list[object] = [None, {}, {"name": "cli"}, {"name": ""}, {"name": 7},
                           {"name": "bad name!"}, {"name": ["x"]}, "text"]
    cases = [(name, info, principal, handler, rev)
             for name in (known, "nope", 3, None)
             for info in infos
             for principal in ("", "alice", "bad principal!")
             for handler in (ok, asks, bad, broken)
             for rev in (V26, "1999-01-01")]
    paths = []
    for fast in (True, False):
        usage = Usage(max_clients=2, max_principals=1)
        for name, info, principal, handler, rev in cases:
            session = Session(lambda m: None, server.catalog, STATELESS)
            params: dict[str, object] = {"name": name, "_meta": {
                "io.modelcontextprotocol/clientInfo": info}}
            call = Call(1, rev, {}, Settings())
            token = PRINCIPAL.set(principal)
            try:
                if fast:  # what Server.answer calls for a prompts/get
                    run = usage.runs.get("prompts/get")
                    assert run is not None and run != usage.run
                    run("prompts/get", handler, session, snap, params, call)
                else:
                    usage._count("prompts/get", handler, session, snap, params, call, None)
            except (RpcError, TemplateError):
                pass
            finally:
                PRINCIPAL.reset(token)
        paths.append((usage.counts, {k: sum(v[:-1]) for k, v in usage.latency.items()},
                      usage.clients.seen, usage.principals.seen))
    assert paths[0] == paths[1]
    assert len(paths[0][0]) > 20  # the cases reached many series


def test_the_remembered_labels_follow_each_snapshot_and_channel(kit_dir: Path) -> None:
    """``Usage._get`` remembers a prompt's labels and latency row for the entry they were
    made from: a new snapshot whose prompt of that name has another version counts under
    the new version, a channel's copy counts under its own label, and serving a new set
    empties every copy's memory (no replaced entry is kept alive by it)."""
    import copy

    from promptops.serve.catalog import Snapshot
    from promptops.serve.methods import Call, Settings
    from promptops.serve.usage import Usage

    app = _app(kit_dir)
    server = app.views.everything
    old = server.catalog.snapshot
    name = old.names[0]
    bundles = list(app.views.bundles)
    bumped = copy.deepcopy(bundles)
    for b in bumped:
        b["package"]["version"] = "9.9.9"
        b["digest"] = "sha256:" + "0" * 64  # a set of its own: no renderer reused
    new = Snapshot.build(bumped)
    usage = Usage()
    beta = usage.for_channel("beta")
    call = Call(1, V26, {}, Settings())
    params = {"name": name, "_meta": {"io.modelcontextprotocol/clientInfo": {"name": "c"}}}

    def ok(*_: object) -> dict[str, object]:
        return {"messages": []}

    for counted, snap in ((usage, old), (beta, old), (usage, new), (usage, old), (beta, new)):
        run = counted.runs.get("prompts/get")
        assert run is not None
        run("prompts/get", ok, server.shared, snap, params, call)
    entry = old.index[name]
    package = old.bundles[entry.slot]["package"]
    pkg, version = package["name"], str(package["version"])
    prompt = entry.prompt["name"]
    assert {(k[3], k[8]): n for k, n in usage.counts.items()} == {
        (version, ""): 2, (version, "beta"): 1, ("9.9.9", ""): 1, ("9.9.9", "beta"): 1}
    assert {k: sum(v[:-1]) for k, v in usage.latency.items()} == {
        (pkg, prompt, version, ""): 2, (pkg, prompt, version, "beta"): 1,
        (pkg, prompt, "9.9.9", ""): 1, (pkg, prompt, "9.9.9", "beta"): 1}
    assert usage._rows and beta._rows
    usage.serving(bumped)
    assert not usage._rows and not beta._rows


def test_more_callers_than_the_series_cache_holds_count_as_the_general_path(
        kit_dir: Path) -> None:
    """``Usage._get`` finds a get's series in the prompt's cache by the names as given,
    caching only names its bounded sets hold: a caller sending more distinct names than
    ``MAX_CELLS``, earlier names (counted as themselves, or as ``other`` past the limit)
    coming back, leaves the same counts, in the same order, and the same bounded names as
    ``_count``, which bounds every request's names; and the caches hold no more keys than
    twice the series (invented names are not remembered)."""
    from promptops.serve.methods import Call, Settings
    from promptops.serve.revisions import STATELESS
    from promptops.serve.session import Session
    from promptops.serve.usage import MAX_CELLS, PRINCIPAL, Usage

    app = _app(kit_dir)
    server = app.views.everything
    snap = server.catalog.snapshot
    known = snap.names[0]
    call = Call(1, V26, {}, Settings())

    def ok(*_: object) -> dict[str, object]:
        return {"messages": []}

    names = [f"c{i}" for i in range(MAX_CELLS + 500)]
    asked = [n for i, n in enumerate(names) for n in ((n, names[i // 7]) if i % 3 else (n,))]
    results = []
    for fast in (True, False):
        usage = Usage(max_clients=3, max_principals=2)
        for i, client in enumerate(asked):
            session = Session(lambda m: None, server.catalog, STATELESS)
            params = {"name": known if i % 5 else "nope",
                      "_meta": {"io.modelcontextprotocol/clientInfo": {"name": client}}}
            token = PRINCIPAL.set(f"p{i % 4}")
            try:
                if fast:
                    run = usage.runs.get("prompts/get")
                    assert run is not None
                    run("prompts/get", ok, session, snap, params, call)
                else:
                    usage._count("prompts/get", ok, session, snap, params, call, None)
            finally:
                PRINCIPAL.reset(token)
        results.append((list(usage.counts.items()), usage.clients.seen, usage.principals.seen))
        if fast:
            cached = len(usage._unknown) + sum(len(r[3]) for r in usage._rows.values())
            assert 0 < cached <= 2 * len(usage.counts)
    assert results[0] == results[1]
    assert sum(n for _, n in results[0][0]) == len(asked)
