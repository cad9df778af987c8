"""JSON-RPC error codes, MCP `_meta` keys and the error shape, shared by the core."""

from __future__ import annotations

from typing import Any

from promptops import __version__

Json = dict[str, Any]
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
INTERNAL_ERROR = -32603
UNSUPPORTED_VERSION, RESOURCE_NOT_FOUND = -32022, -32002
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPS = "io.modelcontextprotocol/clientCapabilities"
META_SERVER = "io.modelcontextprotocol/serverInfo"
META_SUB = "io.modelcontextprotocol/subscriptionId"
SERVER_INFO = {"name": "promptops", "version": __version__}


class Rpc(Exception):
    """A request that gets an error reply; raised anywhere below dispatch."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


def error(id_: Any, code: int, message: str, data: Any = None) -> Json:
    """An error reply; without a known id the id is left out (see Server.reject)."""
    err: Json = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    out: Json = {"jsonrpc": "2.0", "error": err}
    if id_ is not None:
        out["id"] = id_
    return out
