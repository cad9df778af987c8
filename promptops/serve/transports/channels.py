"""Several release channels in one team-server process (``serve --http --channel A
--channel B``): one :class:`HttpApp` per channel, each with its own follower, views,
sessions and streams, behind one ASGI router (docs/channels.md).

The first channel is served at the endpoint path (``/mcp``), every channel also at
``/channels/<channel>/mcp`` (for the first, the router rewrites the path to its own). Each app
answers its own MCP paths (Streamable HTTP, the 2024-11-05 ``sse``/``messages`` pair
beside it, its protected-resource metadata); everything else (``/healthz``, ``/metrics``,
``/hooks/git``, the bare protected-resource document, 404s) goes to the first app, whose
guards are the same as every app's: one auth, one set of allowed hosts and origins.
``/readyz`` is ready only when every channel serves a bundle.

The apps are independent, so a promote of ``staging`` rebuilds and notifies only the
staging app's sessions; production's clients hear nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading

from promptops.serve.transports.http import HttpApp, Receive, Scope, SendAsgi


class ChannelApps:
    """An ASGI app routing each channel's MCP paths to that channel's :class:`HttpApp`."""

    def __init__(self, apps: list[tuple[str, HttpApp]]) -> None:
        assert apps
        self.apps = [app for _, app in apps]
        self.names = [name for name, _ in apps]
        self.config = self.apps[0].config  # the bind (host, port) http_main reads
        # path -> (the app, the path it answers under): the first channel is at its own
        # path and, rewritten, at /channels/<name>/... like every other
        self.routes: dict[str, tuple[HttpApp, str]] = {}
        for i, app in enumerate(self.apps):
            path = app.config.path
            for p in (path, path + "/", app.sse_path, app.messages_path,
                      app.messages_path + "/", "/.well-known/oauth-protected-resource" + path):
                self.routes.setdefault(p, (app, p))
                if i == 0:
                    alias = (f"/.well-known/oauth-protected-resource/channels/{self.names[0]}"
                             f"{path}" if p.startswith("/.well-known/")
                             else f"/channels/{self.names[0]}{p}")
                    self.routes.setdefault(alias, (app, p))

    async def __call__(self, scope: Scope, receive: Receive, send: SendAsgi) -> None:
        kind = scope["type"]
        if kind == "http":
            path: str = scope["path"]
            app, answer = self.routes.get(path, (self.apps[0], path))
            if answer != path:
                scope = {**scope, "path": answer}
            if path == "/readyz":  # ready when every channel is: the first one that is not
                app = next((a for a in self.apps if not a.views.bundles), app)  # says 503
            await app(scope, receive, send)
        elif kind == "lifespan":
            await self._lifespan(receive, send)

    async def _lifespan(self, receive: Receive, send: SendAsgi) -> None:
        while True:
            msg = await receive()
            if msg["type"] == "lifespan.startup":
                for app in self.apps:
                    app.started()  # each chains SIGTERM/SIGINT to drain its own streams
                self._sighup()
                await send({"type": "lifespan.startup.complete"})
            elif msg["type"] == "lifespan.shutdown":
                for app in self.apps:
                    app.stopped()
                await send({"type": "lifespan.shutdown.complete"})
                return

    def _sighup(self) -> None:
        """SIGHUP re-reads the credentials (shared) and ends, in every channel's app, the
        sessions whose grant changed: each app's ``started`` replaced the handler before."""
        if threading.current_thread() is not threading.main_thread() or \
                not hasattr(signal, "SIGHUP"):
            return
        loop = asyncio.get_running_loop()

        def reload() -> None:
            for app in self.apps:
                app.reload_access()

        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signal.SIGHUP, reload)
