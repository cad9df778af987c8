"""JSON-RPC error codes, MCP `_meta` keys and the error shape, shared by the core."""

from __future__ import annotations

from typing import Any

from promptops import __version__
from promptops.serve.wire import LongInt

Json = dict[str, Any]
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
INTERNAL_ERROR = -32603
UNSUPPORTED_VERSION, RESOURCE_NOT_FOUND = -32022, -32002
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPS = "io.modelcontextprotocol/clientCapabilities"
META_SERVER = "io.modelcontextprotocol/serverInfo"
META_SUB = "io.modelcontextprotocol/subscriptionId"
SERVER_INFO = {"name": "promptops", "version": __version__}
MAX_ERROR_TEXT = 1000  # characters of an error message or data string: quoted values are cut


def valid_id(id_: Any) -> bool:
    """JSON-RPC ids are strings or integers (of any length: see wire.LongInt)."""
    return isinstance(id_, (str, LongInt)) or (isinstance(id_, int) and not isinstance(id_, bool))


class Rpc(Exception):
    """A request that gets an error reply; raised anywhere below dispatch."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


def error(id_: Any, code: int, message: str, data: Any = None) -> Json:
    """An error reply; without a known id the id is left out (see Server.reject).

    Messages quote what the client sent (an unknown prompt name, a URI): quoted text
    is cut so that an error reply stays small whatever the request held.
    """
    err: Json = {"code": code, "message": _clip(message)}
    if data is not None:
        if isinstance(data, dict):
            data = {k: _clip(v) if isinstance(v, str) else v for k, v in data.items()}
        err["data"] = data
    out: Json = {"jsonrpc": "2.0", "error": err}
    if id_ is not None:
        out["id"] = id_
    return out


def _clip(text: str) -> str:
    if len(text) <= MAX_ERROR_TEXT:
        return text
    return f"{text[:MAX_ERROR_TEXT]}... ({len(text):,} characters in all)"
