"""How a render failure reaches an MCP client: the JSON-RPC error code of ``prompts/get``.

The renderer says whose fault a failure is and nothing about any protocol
(:class:`~promptops.errors.ArgumentError`, :class:`~promptops.errors.TemplateError`).
MCP answers a request it cannot serve with -32602 (invalid params: an unknown prompt, an
argument its rules refuse) and a server-side failure with -32603 (internal error: a
template that fails or runs over its bounds). serve's reply, a test file's
``error: {code: ...}`` expectation and the review's rendered error lines all read the
code here, so the three always agree.
"""

from __future__ import annotations

from promptops.errors import ArgumentError, RenderError

INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


def error_code(exc: RenderError) -> int:
    """The JSON-RPC error code a client receives for ``exc``."""
    return INVALID_PARAMS if isinstance(exc, ArgumentError) else INTERNAL_ERROR
