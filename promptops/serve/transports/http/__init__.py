"""The Streamable HTTP transport: one ASGI endpoint serving both eras of MCP.

A *dual-era* server, as the 2026-07-28 versioning text describes: the era comes from each
request, by the core's rule (:func:`promptops.serve.revisions.request_era`). A stateless
request is answered without a session of its own (:mod:`.stateless`); ``initialize`` and
any request with an ``Mcp-Session-Id`` belong to a session (:mod:`.sessions`), which
lives until DELETE or idle expiry; the 2024-11-05 HTTP+SSE pair sits beside them
(:mod:`.legacy_sse`). Everything about the protocol is the serve core's: this package
frames bytes, with the codec it is given (:mod:`promptops.serve.codec`).

The objects, bottom up (docs/architecture.md draws them): :mod:`.base` (config, refusal,
ASGI helpers), :mod:`.streams` (every SSE stream: quotas, pump, drain), :mod:`.guard`
(Origin/Host guard, auth gate), the rooms (:mod:`.sessions`, :mod:`.stateless`,
:mod:`.legacy_sse`, :mod:`.ops`, :mod:`.webui`), :mod:`.endpoint` (the ``/mcp`` path) and
:mod:`.app` (:class:`HttpApp`: route table, lifespan, access log).

Requests are answered inline on the event loop (a render is bounded by its deadline, and
a thread hop per request would cost more CPU than most renders); notifications from the
git follower's thread reach streams through ``call_soon_threadsafe``.

Importing the package costs nothing: its names load on first use (PEP 562), so the web
UI's server can use :mod:`.guard` without loading the app and its rooms.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from promptops.serve.transports.http.app import HttpApp
    from promptops.serve.transports.http.base import (
        HttpConfig,
        HttpError,
        Receive,
        Scope,
        SendAsgi,
    )

__all__ = ["HttpApp", "HttpConfig", "HttpError", "Receive", "Scope", "SendAsgi"]
_HOME = {"HttpApp": "app", "HttpConfig": "base", "HttpError": "base", "Receive": "base",
         "Scope": "base", "SendAsgi": "base"}


def __getattr__(name: str) -> object:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
