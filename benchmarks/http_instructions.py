"""Instructions per stateless ``prompts/get`` through the HTTP transport, for before/after.

The HTTP counterpart of ``get_instructions.py``: wall-clock CPU per request on a shared
2-core machine cannot show a few per cent, instruction counts under callgrind can. The
script builds the transport's ASGI app (``HttpApp``, no access log, no auth) over one
bundle and sends N 2026-07-28 ``prompts/get`` requests through its ASGI callable on one
event loop, as uvicorn would hand them over (scope, receive, send): routing, the guard,
the body read, the codec, the era decision, the header checks, the core and the reply.
Run it under callgrind with N = 0 and N = 3000 and divide the difference by 3000:

    valgrind --tool=callgrind --callgrind-out-file=/dev/null \\
        python benchmarks/http_instructions.py 3000 BUNDLE [PROMPT] [NAME=VALUE ...]

(With ``PYTHONPATH=<another checkout>`` the same script measures that checkout.)
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from promptops.pipeline.bundle import load_bundle
from promptops.serve.methods import Settings
from promptops.serve.transports.http import HttpApp, HttpConfig
from promptops.serve.views import Views

V26 = "2026-07-28"


async def run(app: HttpApp, n: int, prompt: str, args: dict[str, str]) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "prompts/get", "params": {
        "name": prompt, "arguments": args, "_meta": {
            "io.modelcontextprotocol/protocolVersion": V26,
            "io.modelcontextprotocol/clientCapabilities": {}}}}).encode()
    headers = [(b"host", b"127.0.0.1:8080"), (b"content-type", b"application/json"),
               (b"accept", b"application/json, text/event-stream"),
               (b"mcp-protocol-version", V26.encode()), (b"mcp-method", b"prompts/get"),
               (b"mcp-name", prompt.encode()), (b"content-length", b"%d" % len(body))]
    scope = {"type": "http", "method": "POST", "path": "/mcp", "query_string": b"",
             "headers": headers, "client": ("127.0.0.1", 5000),
             "server": ("127.0.0.1", 8080), "scheme": "http"}
    request = {"type": "http.request", "body": body, "more_body": False}
    statuses: list[int] = []

    async def receive() -> dict[str, Any]:
        return request

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            statuses.append(message["status"])

    for _ in range(5):  # the first render compiles (past its 2 s deadline under callgrind)
        await app(dict(scope), receive, send)
        if statuses[-1] == 200:
            break
    assert statuses[-1] == 200, statuses
    statuses.clear()
    for _ in range(n):
        await app(dict(scope), receive, send)
    assert set(statuses) <= {200}, set(statuses)


def main() -> None:
    n, bundle = int(sys.argv[1]), load_bundle(Path(sys.argv[2]))
    prompt = sys.argv[3] if len(sys.argv) > 3 else bundle["prompts"][0]["name"]
    args = dict(a.split("=", 1) for a in sys.argv[4:])
    views = Views([bundle], Settings())
    app = HttpApp(views, HttpConfig(access_log=False))
    asyncio.run(run(app, n, prompt, args))


if __name__ == "__main__":
    main()
