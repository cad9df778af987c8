"""The HTTP transport writes the same bytes with either codec it is given.

``HttpApp`` takes a codec (``promptops.serve.codec``: orjson's by default, chosen once by
``auto()``); here the same requests go through its ASGI callable once per codec, as
uvicorn's suite runs over both of its HTTP implementations, and every response (status,
headers, body) must be the same: replies, refusals, parse errors, ids past 64 bits, lone
surrogates, the 2024-11-05 stream's frames aside (they use the same encoder).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from promptops.pipeline.build import Build
from promptops.serve.codec import Codec, OrjsonCodec, StdlibCodec
from promptops.serve.methods import Settings
from promptops.serve.signing import Signer
from promptops.serve.transports.http import HttpApp, HttpConfig
from promptops.serve.views import Views

V26 = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": V26,
        "io.modelcontextprotocol/clientCapabilities": {}}


def _request(method: str, params: dict[str, Any], rid: object = 1,
             name: str | None = None) -> tuple[bytes, dict[str, str]]:
    body = json.dumps({"jsonrpc": "2.0", "id": rid, "method": method,
                       "params": {**params, "_meta": META}}).encode()
    headers = {"content-type": "application/json", "accept": "application/json",
               "mcp-protocol-version": V26, "mcp-method": method}
    if name is not None:
        headers["mcp-name"] = name
    return body, headers


REQUESTS: list[tuple[bytes, dict[str, str]]] = [
    _request("prompts/list", {}),
    _request("prompts/get", {"name": "code_review", "arguments": {"code": "x = 1 \u00e9"}},
             name="code_review"),
    _request("prompts/get", {"name": "code_review", "arguments": {"code": "\ud800 lone"}},
             rid="a\u2028b", name="code_review"),
    _request("prompts/get", {"name": "p00", "arguments": {"topic": "1e-07"}}, rid=7,
             name="p00"),
    _request("prompts/get", {"name": "nope"}, name="nope"),
    _request("resources/list", {}, rid=2**70),
    _request("prompts/list", {"cursor": 1.5e-7}),
    (b'{"jsonrpc":"2.0","id":' + b"9" * 30 + b',"method":"ping","params":{"_meta":'
     + json.dumps(META).encode() + b"}}", {"content-type": "application/json",
                                           "mcp-protocol-version": V26, "mcp-method": "ping"}),
    (b'{"jsonrpc": "2.0", "id": 1, "method"', {"content-type": "application/json",
                                              "mcp-protocol-version": V26}),
    (b"[" * 200 + b"]" * 200, {"content-type": "application/json"}),
]


async def _answer(app: HttpApp, body: bytes, headers: dict[str, str]) -> tuple[Any, ...]:
    scope = {"type": "http", "method": "POST", "path": "/mcp", "query_string": b"",
             "headers": [(k.encode(), v.encode()) for k, v in
                         {"host": "127.0.0.1:8080", **headers}.items()],
             "client": ("127.0.0.1", 5000), "server": ("127.0.0.1", 8080)}
    out: list[Any] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        out.append((message.get("status"), message.get("headers"), message.get("body")))

    await app(scope, receive, send)
    return tuple(out)


@pytest.fixture(scope="module")
def answers(kit_dir: Path) -> dict[str, list[tuple[Any, ...]]]:
    bundle = Build(kit_dir, "HEAD").bundle
    signer = Signer.random()
    found: dict[str, list[tuple[Any, ...]]] = {}
    codec: Codec
    for codec in (StdlibCodec(), OrjsonCodec()):
        app = HttpApp(Views([bundle], Settings(signer=signer)), HttpConfig(access_log=False),
                      codec=codec)
        found[codec.name] = [asyncio.run(_answer(app, b, h)) for b, h in REQUESTS]
    return found


@pytest.mark.parametrize("i", range(len(REQUESTS)))
def test_both_codecs_answer_byte_for_byte(answers: dict[str, list[tuple[Any, ...]]],
                                          i: int) -> None:
    stdlib, orjson = answers["stdlib"][i], answers["orjson"][i]
    assert stdlib == orjson
    assert stdlib[0][0] in (200, 400, 404)  # an answer, not a crash


def test_the_default_codec_is_chosen_once_by_auto(kit_dir: Path) -> None:
    app = HttpApp(Views([], Settings()), HttpConfig(access_log=False))
    assert app.codec.name == "orjson"
    assert app.streams.encode == app.codec.encode
    assert app.streams.dumps == app.codec.dumps  # the replies' path without encode's frame


PING = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'


@pytest.mark.parametrize("body", [None, bytearray(PING)])
def test_a_body_that_is_not_bytes_is_answered_not_raised(kit_dir: Path, body: Any) -> None:
    """ASGI says a body is bytes; a server that sends None or a bytearray gets the general
    read (None reads as empty: the parse error's 400; a bytearray as its bytes would),
    never a 500 from a TypeError."""
    app = HttpApp(Views([Build(kit_dir, "HEAD").bundle], Settings(signer=Signer.random())),
                  HttpConfig(access_log=False))
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    got = asyncio.run(_answer(app, body, headers))
    want = asyncio.run(_answer(app, b"" if body is None else PING, headers))
    assert got == want and got[0][0] == 400
