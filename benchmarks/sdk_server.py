"""The reference server for serve_bench: the official MCP Python SDK (``mcp==2.3.0``) and
its low-level ``Server``, serving a promptops bundle.

Rendering is promptops' own ``Renderer`` (same sandboxed Jinja environment, same
validation, same compiled-template cache), so the two servers in the benchmark produce
byte-identical messages and differ only in the protocol layer: the SDK's pydantic
models, anyio streams and dispatcher against promptops' plain-JSON stdio loop.
Prompts are listed in pages of ``--page-size`` (default 100, as ``promptops serve``),
the cursor being the offset as a string.

Usage: python benchmarks/sdk_server.py --bundle FILE [--page-size N]
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from promptops.errors import RenderError
from promptops.pipeline.bundle import load_bundle
from promptops.render.renderer import Renderer


def build_server(bundle: dict[str, Any], page_size: int) -> Server[Any]:
    renderer = Renderer(bundle)
    listed = [
        types.Prompt(
            name=p["name"],
            title=p.get("title"),
            description=p.get("description"),
            arguments=[
                types.PromptArgument(name=a["name"], title=a.get("title"),
                                     description=a.get("description"),
                                     required=bool(a.get("required")))
                for a in p["arguments"]
            ],
        )
        for p in sorted(bundle["prompts"], key=lambda p: p["name"])
    ]

    async def list_prompts(ctx: object, params: types.PaginatedRequestParams | None
                           ) -> types.ListPromptsResult:
        cursor = params.cursor if params is not None else None
        try:
            start = int(cursor) if cursor else 0
        except ValueError:
            raise MCPError(-32602, f"invalid cursor {cursor!r}") from None
        end = start + page_size
        return types.ListPromptsResult(prompts=listed[start:end],
                                       next_cursor=str(end) if end < len(listed) else None)

    async def get_prompt(ctx: object, params: types.GetPromptRequestParams
                         ) -> types.GetPromptResult:
        try:
            result = renderer.get(params.name, params.arguments)
        except RenderError as exc:
            raise MCPError(exc.code, str(exc)) from None
        return types.GetPromptResult.model_validate(result)

    name = bundle["package"]["name"]
    return Server(f"sdk-{name}", version=bundle["package"].get("version", ""),
                  on_list_prompts=list_prompts, on_get_prompt=get_prompt)


async def run(server: Server[Any]) -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bundle", type=Path, required=True)
    ap.add_argument("--page-size", type=int, default=100)
    a = ap.parse_args()
    anyio.run(run, build_server(load_bundle(a.bundle), a.page_size))


if __name__ == "__main__":
    main()
