"""The ASGI application of ``serve --http``: the route table, the lifespan, the access log.

:class:`HttpApp` builds the transport's objects once and routes each request by path:

==========================================  ===============================================
``<path>``, ``<path>/``                     :class:`~.endpoint.McpEndpoint` (auth gate)
``<root>/sse``, ``<root>/messages[/]``      :class:`~.legacy_sse.LegacySse` (auth gate)
anything else                               the :class:`~.guard.HostGuard`, then
                                            :class:`~.ops.Ops` (health, readiness, metrics,
                                            metadata, webhook, usage), then the web UI
                                            (:class:`~.webui.WebUi`, with ``--ui``), else 404
==========================================  ===============================================

Every request leaves one access-log line on stderr and, for MCP requests, one metrics
observation. The lifespan start remembers the event loop (the stream registry needs it
for notifications from the follower's thread), starts the idle-session sweeper, chains
SIGTERM/SIGINT to :meth:`HttpApp.drain` and SIGHUP to :meth:`HttpApp.reload_access`.
Shutdown (``drain``): new streams are refused with 503, every listen stream gets its final
``SubscriptionsListenResult`` and ends, GET streams end, and the ASGI server then finishes
in-flight requests within its graceful timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sys
import threading
import time
from bisect import bisect_left
from collections.abc import Awaitable, Callable
from time import perf_counter
from types import FrameType
from typing import TYPE_CHECKING

from promptops.serve.auth import StaticTokens
from promptops.serve.cycle import Replier
from promptops.serve.transports.http.base import (
    RPC,
    WHO,
    HttpConfig,
    Note,
    Receive,
    Scope,
    SendAsgi,
    respond,
)
from promptops.serve.transports.http.endpoint import McpEndpoint
from promptops.serve.transports.http.guard import Admitted, AuthGate, Guarded, HostGuard
from promptops.serve.transports.http.legacy_sse import LegacySse
from promptops.serve.transports.http.ops import Ops
from promptops.serve.transports.http.sessions import SessionEra
from promptops.serve.transports.http.stateless import StatelessExchange
from promptops.serve.transports.http.streams import StreamRegistry
from promptops.serve.transports.http.webui import WebUi
from promptops.serve.usage import TRACE_ID

if TYPE_CHECKING:
    from promptops.serve.auth import JwtTokens
    from promptops.serve.codec import Codec
    from promptops.serve.metrics import Metrics
    from promptops.serve.usage import Usage
    from promptops.serve.views import Views


def _log(message: str) -> None:
    from promptops.serve.log import log

    log(message)


class HttpApp:
    """The ASGI application (see the module docstring); ``drain()`` ends its streams."""

    def __init__(self, views: Views, config: HttpConfig, *,
                 auth: StaticTokens | JwtTokens | None = None, metrics: Metrics | None = None,
                 on_start: Callable[[], None] | None = None,
                 on_stop: Callable[[], None] | None = None,
                 ui: Callable[[Scope, Receive, SendAsgi], Awaitable[None]] | None = None,
                 codec: Codec | None = None) -> None:
        if codec is None:
            from promptops.serve.codec import auto

            codec = auto()
        self.views, self.config, self.auth, self.metrics = views, config, auth, metrics
        self.codec = codec
        self._on_start, self._on_stop = on_start, on_stop
        authenticated = auth is not None
        self.guard = HostGuard(allow_origins=config.allow_origins,
                               allow_hosts=config.allow_hosts, loopback=config.loopback)
        self.gate = AuthGate(self.guard, auth, prm_url=config.prm_url,
                             required_scopes=config.required_scopes, log=_log)
        self.streams = StreamRegistry(max_streams=config.max_streams,
                                      keepalive_s=config.keepalive_s, encode=codec.encode,
                                      metrics=metrics, dumps=codec.dumps)
        replier = Replier()  # the usual reply written on uvicorn's cycle (cycle.py)
        self.sessions = SessionEra(views, config, self.streams, authenticated=authenticated,
                                   replier=replier)
        self.stateless = StatelessExchange(views, self.streams, authenticated=authenticated,
                                           replier=replier)
        self.endpoint = McpEndpoint(self.gate, codec, self.sessions, self.stateless,
                                    config.max_body)
        self.legacy = LegacySse(views, self.streams, endpoint=config.path,
                                max_body=config.max_body, authenticated=authenticated)
        self.sse_path, self.messages_path = self.legacy.sse_path, self.legacy.messages_path
        self.ops = Ops(views, config, self.gate, codec.encode, metrics)
        # `serve --http --ui`: promptops.ui.mount, behind the gate (docs/ui.md)
        self.ui = WebUi(ui, self.gate, codec.encode) if ui is not None else None
        self._legacy = Admitted(self.legacy, self.gate, codec.encode)
        self._others = Guarded(self._other, self.guard, codec.encode)
        self._mcp_paths = (config.path, config.path + "/")
        # the endpoint's coroutine function as a bound method: awaiting an instance's
        # __call__ enters the interpreter from C (~700 instructions a request more)
        self._mcp = self.endpoint.__call__

    @property
    def usage(self) -> Usage | None:
        """Per-prompt counters and GET /usage (usage.py); given after construction."""
        return self.ops.usage

    @usage.setter
    def usage(self, usage: Usage | None) -> None:
        self.ops.usage = self.endpoint.usage = usage

    @property
    def loop(self) -> asyncio.AbstractEventLoop | None:
        return self.streams.loop

    @loop.setter
    def loop(self, loop: asyncio.AbstractEventLoop | None) -> None:
        self.streams.loop = loop

    @property
    def draining(self) -> bool:
        return self.streams.draining

    # ---- ASGI ---------------------------------------------------------------------------
    async def __call__(self, scope: Scope, receive: Receive, send: SendAsgi) -> None:
        """An HTTP request here, without a coroutine of its own (one per request fewer);
        the lifespan in :meth:`_lifespan`."""
        if scope["type"] != "http":
            if scope["type"] == "lifespan":
                await self._lifespan(receive, send)
            return
        path: str = scope["path"]
        started = perf_counter()
        note: Note = [None, None]  # [RPC, WHO]
        status = 500
        try:
            if path in self._mcp_paths:
                status = await self._mcp(scope, receive, send, note)
            elif path in self.legacy.paths:
                note[RPC] = "http+sse"
                status = await self._legacy(scope, receive, send, note)
            else:
                status = await self._others(scope, receive, send, note)
        finally:
            if self.config.access_log:
                self._access(scope, status, started, note)
            rpc, metrics = note[RPC], self.metrics
            if rpc is not None and metrics is not None:  # Metrics.observe, without its call
                seconds = perf_counter() - started
                child = metrics.children.get((rpc, status))
                if child is None:
                    child = metrics.child(rpc, status)
                child.count += 1
                row = child.row  # (bisect_left is 0 for the usual request: no call)
                row[0 if seconds <= metrics.first else bisect_left(metrics.buckets, seconds)] += 1
                row[-1] += seconds

    async def _other(self, scope: Scope, receive: Receive, send: SendAsgi, note: Note) -> int:
        """Past the guard: an operator's route, the UI, or 404."""
        route = self.ops.route(scope["path"])
        if route is not None:
            return await route(scope, receive, send, note)
        if self.ui is not None:
            return await self.ui(scope, receive, send, note)
        return await respond(send, 404, b'{"error":"not found"}')

    def _access(self, scope: Scope, status: int, started: float, note: Note) -> None:
        client = scope.get("client") or ("", 0)
        entry = {"ts": round(time.time(), 3), "remote": client[0], "verb": scope["method"],
                 "path": scope["path"], "status": status,
                 "ms": round((time.perf_counter() - started) * 1000, 3)}
        if note[RPC]:
            entry["rpc"] = note[RPC]
        if note[WHO]:
            entry["principal"] = note[WHO]
        trace = TRACE_ID.get()
        if trace:
            entry["trace"] = trace
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.write(json.dumps(entry, separators=(",", ":")) + "\n")

    # ---- lifespan -----------------------------------------------------------------------
    async def _lifespan(self, receive: Receive, send: SendAsgi) -> None:
        while True:
            msg = await receive()
            if msg["type"] == "lifespan.startup":
                self.started()
                await send({"type": "lifespan.startup.complete"})
            elif msg["type"] == "lifespan.shutdown":
                self.stopped()
                await send({"type": "lifespan.shutdown.complete"})
                return

    def started(self) -> None:
        """At lifespan start: remember the loop, chain the signal handlers, start following."""
        loop = self.streams.loop = asyncio.get_running_loop()
        self.sessions.start(loop)
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT):
                self._chain(sig)
            if hasattr(signal, "SIGHUP"):
                with contextlib.suppress(NotImplementedError, RuntimeError):
                    loop.add_signal_handler(signal.SIGHUP, self.reload_access)
        if self._on_start is not None:
            self._on_start()

    def stopped(self) -> None:
        """At lifespan shutdown: end the streams, stop following."""
        self.drain()
        if self._on_stop is not None:
            self._on_stop()

    def _chain(self, sig: signal.Signals) -> None:
        """Drain our streams on ``sig``, then let the ASGI server's handler run.

        uvicorn waits for every connection to close before it sends lifespan.shutdown,
        and an open listen stream never closes by itself: so the streams end first.
        """
        previous = signal.getsignal(sig)
        loop = self.streams.loop
        assert loop is not None

        def handler(signum: int, frame: FrameType | None) -> None:
            loop.call_soon_threadsafe(self.drain)
            if callable(previous):
                previous(signum, frame)

        signal.signal(sig, handler)

    def reload_access(self) -> None:
        """SIGHUP: read the credentials again, and end every session (and its stream) whose
        owner's grant is no longer the one it was opened under: a narrowed token keeps
        nothing of its wider view, not even the notifications of an open stream."""
        if self.auth is None:
            return
        _log(self.auth.reload())
        if not isinstance(self.auth, StaticTokens):
            return  # a JWT's grant comes with each token: checked per request
        grants = self.auth.grants()
        self.sessions.regrant(grants)
        self.legacy.regrant(grants)

    def drain(self) -> None:
        """Refuse new streams; end every open one, listen streams with their final result."""
        if self.streams.draining:
            return
        self.sessions.stop()
        self.streams.drain()
