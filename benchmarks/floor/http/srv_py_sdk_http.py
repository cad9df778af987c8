"""HTTP anchor: official `mcp` SDK (2.3.0) lowlevel Server over Streamable HTTP, served by uvicorn.

Same prompt set and handlers as ../anchors/srv_lowlevel.py (prompts/list, prompts/get rendered
with jinja2, lazy compile + cache). One Server instance; the SDK's StreamableHTTPSessionManager
creates a transport per session (stateful) or per request (--stateless). Requests carrying
`MCP-Protocol-Version: 2026-07-28` are routed by the SDK to its per-request "modern" path whatever
the flags say (no initialize, no session; `_meta` envelope required).

usage: PROMPTSET=promptset_1000.json python srv_py_sdk_http.py --port N
         [--stateless] [--json] [--http h11|httptools] [--loop asyncio|uvloop]
  --json       json_response=True (one application/json body per POST) instead of the SDK
               default, an SSE stream per POST
  --stateless  stateless_http=True (no Mcp-Session-Id; fresh transport + server task per POST)
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))  # floor/promptset.py

import mcp_types as types  # noqa: E402
import uvicorn  # noqa: E402
from mcp.server import Server  # noqa: E402

import promptset  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--port", type=int, required=True)
ap.add_argument("--stateless", action="store_true")
ap.add_argument("--json", action="store_true")
ap.add_argument("--http", default="h11")
ap.add_argument("--loop", default="asyncio")
opt = ap.parse_args()

prompts = promptset.load()
renderer = promptset.Renderer(prompts)
listed = [
    types.Prompt(name=p["name"], description=p["description"],
                 arguments=[types.PromptArgument(**a) for a in p["arguments"]])
    for p in prompts
]
required = {p["name"]: [a["name"] for a in p["arguments"] if a["required"]] for p in prompts}


async def list_prompts(ctx, params):
    return types.ListPromptsResult(prompts=listed)


async def get_prompt(ctx, params):
    name = params.name
    if name not in required:
        raise ValueError(f"Unknown prompt: {name}")
    args = params.arguments or {}
    missing = [a for a in required[name] if a not in args]
    if missing:
        raise ValueError(f"Missing required arguments: {missing}")
    a, u = renderer.render(name, args["topic"], args.get("tone", "neutral"))
    return types.GetPromptResult(description=None, messages=[
        types.PromptMessage(role="assistant", content=types.TextContent(type="text", text=a)),
        types.PromptMessage(role="user", content=types.TextContent(type="text", text=u)),
    ])


server = Server("bench-py-sdk-http", on_list_prompts=list_prompts, on_get_prompt=get_prompt)
app = server.streamable_http_app(json_response=opt.json, stateless_http=opt.stateless,
                                 host="127.0.0.1", session_idle_timeout=None, max_sessions=None)

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=opt.port, http=opt.http, loop=opt.loop,
                log_level="warning", access_log=False)
