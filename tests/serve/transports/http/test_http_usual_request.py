"""The endpoint's usual request answers exactly as the general path answers it.

``McpEndpoint`` reads the usual request's method, id and params itself
(``jsonrpc.usual``: what ``jsonrpc.read`` would make of it) and hands them to either era,
which answer through ``Server.answer`` without ``read``, ``Server.handle`` and ``_one``; and
it remembers the (Origin, Host, Content-Type, Accept) values for which the guard and
``check_media`` passed, so a POST with those values is not checked again (issue 26). Here
the same requests go through two apps ``serve --http`` builds (usage and metrics
attached): one as it runs, one with the endpoint made to read no usual request and to
remember no header values, so that every message takes the general path. Every response
must be the same bytes (status, headers but the session id, body) in both eras - gets,
unknown prompt, missing and over-long argument, wrong name and argument types, other
methods, ids of both types, malformed envelopes, refused and allowed header values after
a pass, other verbs - and the usage and metrics counts the same.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from promptops.serve.http import build
from promptops.serve.options import ServeOptions
from promptops.serve.server import Server
from promptops.serve.transports.http import HttpApp, endpoint

V26 = "2026-07-28"
OLD = "2025-06-18"
GOOD = {"code": "x = 1", "language": "python"}
META = {"io.modelcontextprotocol/protocolVersion": V26,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "agent", "version": "1"}}
Reply = tuple[int, list[tuple[str, str]], bytes]

# (method, params or None for none, id): answered in both eras
CALLS: list[tuple[str, Any, object]] = [
    ("prompts/get", {"name": "code_review", "arguments": GOOD}, 1),
    ("prompts/get", {"name": "code_review", "arguments": GOOD}, "s-1"),
    ("prompts/get", {"name": "code_review", "arguments": {"code": "x"}}, 2),  # one missing
    ("prompts/get", {"name": "code_review", "arguments": {**GOOD, "code": "y" * 51}}, 3),
    ("prompts/get", {"name": "code_review", "arguments": {**GOOD, "code": "z" * 300_000}}, 4),
    ("prompts/get", {"name": "nope", "arguments": {}}, 5),
    ("prompts/get", {"name": "broken"}, 6),
    ("prompts/get", {"name": 7}, 7),
    ("prompts/get", {"name": "code_review", "arguments": "x"}, 8),
    ("prompts/get", {"name": "code_review", "arguments": {"code": 1, "language": "py"}}, 9),
    ("prompts/get", {"name": "p00"}, 10),
    ("prompts/list", {}, 11),
    ("ping", {}, 12),
    ("nope/method", {}, 13),
    ("completion/complete", {"ref": {"type": "ref/prompt", "name": "code_review"},
                             "argument": {"name": "language", "value": "py"}}, 14),
    ("prompts/get", None, 15),  # no params: read() makes them {}; the endpoint leaves it
    ("prompts/get", {"name": "code_review", "arguments": GOOD}, 1.5),  # not an id
    ("prompts/get", {"name": "code_review", "arguments": GOOD}, None),
]


class Drive:
    """Requests through an app's ASGI callable, as uvicorn makes them."""

    def __init__(self, app: HttpApp) -> None:
        self.app = app

    async def post(self, body: bytes, headers: dict[str, str]) -> Reply:
        return await self.request("POST", "/mcp", body, headers)

    async def request(self, verb: str, path: str, body: bytes = b"",
                      headers: dict[str, str] | None = None) -> Reply:
        scope = {"type": "http", "method": verb, "path": path, "query_string": b"",
                 "headers": [(k.encode(), v.encode()) for k, v in
                             {"host": "127.0.0.1:8080", **(headers or {})}.items()],
                 "client": ("127.0.0.1", 5000), "server": ("127.0.0.1", 8080)}
        out: dict[str, Any] = {"body": b""}

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": body, "more_body": False}

        async def send(msg: dict[str, Any]) -> None:
            if msg["type"] == "http.response.start":
                out["status"] = msg["status"]
                out["headers"] = [(k.decode(), v.decode()) for k, v in msg["headers"]]
            else:
                out["body"] += msg.get("body", b"")

        await self.app(scope, receive, send)
        return out["status"], out["headers"], out["body"]


def _body(method: str, params: Any, rid: object, modern: bool) -> bytes:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        msg["params"] = {**params, "_meta": META} if modern else params
    elif modern:
        msg["params"] = {"_meta": META}
    return json.dumps(msg).encode()


async def _conversation(drive: Drive) -> list[Reply]:
    drive.app.loop = asyncio.get_running_loop()  # what the lifespan start sets
    replies: list[Reply] = []
    hdrs = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": OLD, "capabilities": {},
        "clientInfo": {"name": "cursor", "version": "1"}}}
    first = await drive.post(json.dumps(init).encode(), hdrs)
    sid = dict(first[1])["mcp-session-id"]
    replies.append(first)
    joined = {**hdrs, "mcp-session-id": sid, "mcp-protocol-version": OLD}
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    replies.append(await drive.post(json.dumps(note).encode(), joined))
    for method, params, rid in CALLS:
        replies.append(await drive.post(_body(method, params, rid, False), joined))
        name = params.get("name") if isinstance(params, dict) else None
        modern = {**hdrs, "mcp-protocol-version": V26, "mcp-method": method}
        if isinstance(name, str):
            modern["mcp-name"] = name
        replies.append(await drive.post(_body(method, params, rid, True), modern))
    # a session-era request of another revision, a wrong "jsonrpc", a batch: the general
    # path's answers in both apps
    replies.append(await drive.post(b'{"jsonrpc":"1.0","id":1,"method":"ping","params":{}}',
                                    joined))
    replies.append(await drive.post(b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]', joined))
    replies.append(await drive.post(_body("ping", {}, 1, False),
                                    {**joined, "mcp-protocol-version": "2030-01-01"}))
    # the guard's and check_media's remembered answers: header values that passed before,
    # each with one value changed, other verbs with the same values, allowed variants
    ping = _body("ping", {}, 1, False)
    for changed in ({"origin": "http://evil.example"}, {"origin": "http://localhost:3000"},
                    {"origin": "null"}, {"host": "evil.example"}, {"host": "localhost:8080"},
                    {"content-type": "text/plain"},
                    {"content-type": "Application/JSON; charset=utf-8"},
                    {"accept": "text/html"}, {"accept": "*/*"}, {"accept": ""}):
        for _ in range(2):  # the second time, a value set that passed is remembered
            replies.append(await drive.post(ping, {**joined, **changed}))
    for verb in ("PUT", "DELETE"):
        replies.append(await drive.request(verb, "/mcp", ping, hdrs))
    replies.append(await drive.post(ping, joined))
    return [(status, [h for h in head if h[0] != "mcp-session-id"], body)
            for status, head, body in replies]


def _figures(drive: Drive) -> tuple[Any, ...]:
    """The usage and metrics counts (times aside) and the /usage report (its clock aside)."""
    async def scrape() -> tuple[bytes, bytes]:
        return (await drive.request("GET", "/metrics"))[2], \
            (await drive.request("GET", "/usage"))[2]

    metrics, usage = asyncio.run(scrape())
    counts = sorted((s.name, tuple(sorted(s.labels.items())), s.value)
                    for f in text_string_to_metric_families(metrics.decode())
                    for s in f.samples if s.name.endswith(("_total", "_count")))
    report = json.loads(usage)
    del report["since"], report["now"]
    return counts, report


def _run(kit_dir: Path) -> tuple[list[Reply], tuple[Any, ...]]:
    drive = Drive(build(ServeOptions.parse(["--http=", "--no-access-log", str(kit_dir)])))
    return asyncio.run(_conversation(drive)), _figures(drive)


@pytest.fixture(scope="module")
def both(kit_dir: Path) -> dict[str, Any]:
    handled: list[object] = []
    general = Server.handle
    media: list[object] = []
    check_media = endpoint.check_media

    def counted(self: Server, session: Any, message: object) -> Any:
        handled.append(message)
        return general(self, session, message)

    def media_counted(hdrs: dict[str, str]) -> None:
        media.append(hdrs)
        check_media(hdrs)

    # Both compared apps start from the build cache: a first start builds cold, and a
    # cold build serves a content's annotations in another key order than a start from
    # the cache (the same JSON value; found by this test, on the base as well)
    _run(kit_dir)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Server, "handle", counted)
        mp.setattr(endpoint, "check_media", media_counted)
        usual = _run(kit_dir)
        usual_handled, usual_media = list(handled), len(media)
        handled.clear()
        media.clear()
        mp.setattr(endpoint.jsonrpc, "usual", lambda _: None)  # the endpoint reads none
        mp.setattr(endpoint, "MAX_PASSED", 0)  # and remembers no checked header values
        slow = _run(kit_dir)
    return {"usual": usual, "general": slow, "usual_handled": usual_handled,
            "general_handled": list(handled), "usual_media": usual_media,
            "general_media": len(media)}


def test_the_usual_request_replies_byte_for_byte_as_the_general_path(
        both: dict[str, Any]) -> None:
    usual, general = both["usual"][0], both["general"][0]
    assert len(usual) == len(general) == 2 + 2 * len(CALLS) + 3 + 20 + 3
    for i, (a, b) in enumerate(zip(usual, general, strict=True)):
        assert a == b, (i, a, b)
    statuses = {status for status, _, _ in usual}
    # results, errors and refusals were compared (the guard's and media checks' too)
    assert {200, 202, 400, 403, 404, 405, 406, 415} <= statuses
    bodies = b"".join(body for _, _, body in usual)
    for said in (b"unknown prompt", b"language", b"maxLength", b'"messages"', b'"id":"s-1"'):
        assert said in bodies, said


def test_the_usual_request_counts_as_the_general_path(both: dict[str, Any]) -> None:
    usual, general = both["usual"][1], both["general"][1]
    assert usual == general
    counts = dict(((name, labels), v) for name, labels, v in usual[0])
    gets = [k for k in counts if k[0] == "promptops_prompt_requests_total" and
            ("method", "prompts/get") in k[1]]
    assert len(gets) >= 6  # ok, invalid, not found, render error in both eras


def test_the_usual_request_skips_the_general_path(both: dict[str, Any]) -> None:
    # the session era's usual requests never reach Server.handle; the general run hands
    # every session-era message to it
    usual, general = both["usual_handled"], both["general_handled"]
    assert len(general) > len(usual) + len(CALLS) - 4
    assert not any(isinstance(m, dict) and m.get("id") == "s-1" for m in usual)
    assert any(isinstance(m, dict) and m.get("id") == "s-1" for m in general)


def test_passed_header_values_skip_the_guard_and_media_checks(both: dict[str, Any]) -> None:
    # every POST of the general run is checked; the usual run checks each value set once
    # (and every one that was refused, each time)
    usual, general = both["usual_media"], both["general_media"]
    assert general >= 2 + 2 * len(CALLS) + 3 + 15
    assert usual <= 4 + 12
