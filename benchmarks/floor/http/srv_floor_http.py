"""HTTP floor: a bare ASGI app on uvicorn answering MCP JSON-RPC on POST /mcp with plain
application/json bodies. No sessions, no SSE, no Starlette, no pydantic: it measures what
uvicorn (and the jinja2 render) cost by themselves. It answers initialize (without issuing an
Mcp-Session-Id), notifications (202), ping, prompts/list (pre-serialized) and prompts/get (same
jinja2 templates, lazy compile + cache, as the SDK anchors). A `_meta` envelope is ignored, so
both the handshake era and 2026-07-28-style requests work.

usage: PROMPTSET=promptset_1000.json python srv_floor_http.py --port N
         [--http h11|httptools] [--loop asyncio|uvloop]
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))  # floor/promptset.py

import uvicorn  # noqa: E402

import promptset  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--port", type=int, required=True)
ap.add_argument("--http", default="h11")
ap.add_argument("--loop", default="asyncio")
opt = ap.parse_args()

_enc = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def dumps(o):
    return _enc.encode(o).encode()


SUPPORTED = {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}
prompts = promptset.load()
renderer = promptset.Renderer(prompts)
meta = [{"name": p["name"], "description": p["description"], "arguments": p["arguments"]} for p in prompts]
required = {p["name"]: [a["name"] for a in p["arguments"] if a["required"]] for p in prompts}
LIST = dumps({"prompts": meta})
JSON_HDR = [(b"content-type", b"application/json")]


def result(id_, body):
    return b'{"jsonrpc":"2.0","id":' + dumps(id_) + b',"result":' + body + b"}"


def error(id_, code, msg):
    return dumps({"jsonrpc": "2.0", "id": id_, "error": {"code": code, "message": msg}})


def handle(msg):
    method, id_ = msg.get("method"), msg.get("id")
    if id_ is None:
        return None
    params = msg.get("params") or {}
    if method == "prompts/get":
        name = params.get("name")
        args = params.get("arguments") or {}
        if name not in required:
            return error(id_, -32602, f"Unknown prompt: {name}")
        missing = [a for a in required[name] if a not in args]
        if missing:
            return error(id_, -32602, f"Missing required arguments: {missing}")
        a, u = renderer.render(name, args["topic"], args.get("tone", "neutral"))
        return result(id_, dumps({"messages": [
            {"role": "assistant", "content": {"type": "text", "text": a}},
            {"role": "user", "content": {"type": "text", "text": u}}]}))
    if method == "prompts/list":
        return result(id_, LIST)
    if method == "initialize":
        pv = params.get("protocolVersion")
        return result(id_, dumps({
            "protocolVersion": pv if pv in SUPPORTED else "2025-11-25",
            "capabilities": {"prompts": {"listChanged": False}},
            "serverInfo": {"name": "bench-floor-http", "version": "0.0.1"}}))
    if method == "ping":
        return result(id_, b"{}")
    return error(id_, -32601, f"Method not found: {method}")


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        while True:
            m = await receive()
            if m["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif m["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    if scope["type"] != "http":
        return
    if scope["method"] != "POST" or scope["path"] != "/mcp":
        await send({"type": "http.response.start", "status": 405, "headers": []})
        await send({"type": "http.response.body", "body": b""})
        return
    chunks = []
    while True:
        m = await receive()
        chunks.append(m.get("body", b""))
        if not m.get("more_body"):
            break
    try:
        msg = json.loads(b"".join(chunks))
        body = handle(msg) if isinstance(msg, dict) else error(None, -32600, "Invalid Request")
    except ValueError:
        body = error(None, -32700, "Parse error")
    if body is None:
        await send({"type": "http.response.start", "status": 202, "headers": []})
        await send({"type": "http.response.body", "body": b""})
        return
    await send({"type": "http.response.start", "status": 200,
                "headers": JSON_HDR + [(b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=opt.port, http=opt.http, loop=opt.loop,
                log_level="warning", access_log=False, lifespan="on")
