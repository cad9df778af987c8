"""`promptops serve --http`: the team server, as an ASGI app and as a command.

:func:`create_app` is the importable factory (``uvicorn --factory
promptops.serve.http:create_app``, ``gunicorn -k uvicorn_worker.UvicornWorker
'promptops.serve.http:create_app()'``): called bare, it reads the same options as the
command from ``$PROMPTOPS_SERVE_ARGS``, so every deployment is configured one way.
:func:`http_main` is the command: it builds the app and runs it on uvicorn (httptools and
uvloop when installed) with a graceful-shutdown bound, draining streams on SIGTERM.

The HTTP front door, as :mod:`promptops.serve.main` is stdio's: the same
:class:`~promptops.serve.options.ServeOptions`, the same
:func:`~promptops.serve.assemble.assemble` (one per ``--channel``, each with its own
follower and :class:`~promptops.serve.views.Views`), then the transport's app and uvicorn.
Kept apart from ``promptops.serve.main`` so the stdio path never imports uvicorn,
prometheus-client or PyJWT (tests/serve/transports/http/test_cold_path.py checks that).
What is served comes from the same places as on stdio - package folders followed at
their HEAD, fixed ``--bundle`` files - plus ``--repo URL[@BRANCH]``, a remote repository
followed by fetching (:mod:`promptops.serve.remote`).
"""

from __future__ import annotations

import os
import shlex
import signal
import sys
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from promptops.errors import PromptopsError, UsageError
from promptops.serve.log import log
from promptops.serve.options import ServeOptions

if TYPE_CHECKING:
    from pathlib import Path

    from promptops.pipeline.bundle_types import Bundle
    from promptops.pipeline.collector import Settler
    from promptops.serve.assemble import Served
    from promptops.serve.auth import JwtTokens, StaticTokens
    from promptops.serve.background import Gate, News
    from promptops.serve.metrics import Metrics
    from promptops.serve.remote import Remote
    from promptops.serve.tracing import Tracing
    from promptops.serve.transports.channels import ChannelApps
    from promptops.serve.transports.http import HttpApp, HttpConfig
    from promptops.serve.usage import Usage
    from promptops.serve.views import Views


def build(options: ServeOptions, gate: Gate | None = None) -> HttpApp | ChannelApps:
    """The app for ``options`` (nothing bound or started yet): one :class:`HttpApp` per
    channel over its own assembly, behind one router when there are several. ``gate``
    refuses commits as in stdio mode (the entry point passes lint's)."""
    from promptops.pipeline.collector import Settler
    from promptops.serve.assemble import assemble, settings
    from promptops.serve.follow import Follower
    from promptops.serve.metrics import Metrics
    from promptops.serve.usage import Usage
    from promptops.serve.views import Views

    options.check()
    answers = settings(options)
    metrics = Metrics()
    tracing = _tracing()
    auth = _auth(options)
    usage = Usage(tracing=tracing)  # per-prompt counters: /metrics and /usage; spans
    metrics.registry.register(usage)
    every: list[Served[Views]] = []  # each channel's: /metrics shows what all of them serve
    remote, dirs = _remote(options, every)
    webhook = _webhook(options, remote)
    settler = Settler()  # the process's collector: frozen at start, settled per swap

    def views(bundles: list[Bundle]) -> Views:
        return Views(bundles, answers, private=auth is not None)

    def count_failure(_failure: object) -> None:
        metrics.failed.inc()

    channels: list[str | None] = list(options.channel) or [None]
    apps: list[tuple[str, HttpApp]] = []
    for i, channel in enumerate(channels):
        path = options.path if i == 0 else \
            f"/channels/{channel}{options.path.rstrip('/') or '/mcp'}"
        config = _config(options, path, webhook)
        served = assemble(options, gate, views, channel=channel, folders=dirs)
        served.reporter.failures.append(count_failure)
        if tracing is not None and isinstance(served.follower, Follower):
            served.follower.traced = tracing.rebuild
        if served.follower is not None:
            served.follower.settler = settler
        every.append(served)
        served.front.count(usage.for_channel(channel or ""))  # the channel label (usage.py)
        last = i == len(channels) - 1
        life = _Channel(served, metrics, usage, every, remote if last else None,  # started
                        tracing if last else None,  # once, by the last app
                        settler if last else None)
        app = _app(served.front, config, metrics, auth, life, usage,
                   with_ui=options.ui and i == 0)
        apps.append((channel or "", app))
        host = options.host
        log(f"serving {sum(len(b['prompts']) for b in served.front.bundles)} prompts"
            + (f" of channel {channel}" if channel else "") + " over HTTP at "
            f"http://{host if ':' not in host else f'[{host}]'}:{options.port}{config.path}")
    _served(metrics, usage, every)
    if len(apps) == 1:
        return apps[0][1]
    from promptops.serve.transports.channels import ChannelApps

    return ChannelApps(apps)


def _config(options: ServeOptions, path: str,
            webhook: Callable[[dict[str, str], bytes], int] | None) -> HttpConfig:
    """The transport's bind and bounds for the endpoint at ``path``."""
    from promptops.serve.transports.http import HttpConfig

    return HttpConfig(
        host=options.host, port=options.port, path=path, allow_origins=options.allow_origin,
        allow_hosts=options.allow_host, max_body=options.max_body,
        session_idle_s=options.session_idle, max_sessions=options.max_sessions,
        max_sessions_per_client=options.max_sessions_per_client,
        max_streams=options.max_streams, replica_id=options.replica_id,
        access_log=not options.no_access_log, resource=options.audience,
        required_scopes=options.require_scope, issuer=options.issuer, webhook=webhook)


def _served(metrics: Metrics, usage: Usage, every: list[Served[Views]]) -> None:
    """What every channel serves, to /metrics and the usage counters."""
    bundles = [b for served in every for b in served.front.bundles]
    metrics.served(bundles)
    usage.serving(bundles)


class _Channel:
    """One channel's life in the team server: what a new bundle set does (swap, count,
    log), and what starts and stops with its app (the follower; the remote and tracing,
    which the last channel's app owns)."""

    def __init__(self, served: Served[Views], metrics: Metrics, usage: Usage,
                 every: list[Served[Views]], remote: Remote | None,
                 tracing: Tracing | None, settler: Settler | None = None) -> None:
        self.served, self.metrics, self.usage, self.every = served, metrics, usage, every
        self.remote, self.tracing, self.settler = remote, tracing, settler

    def swapped(self, bundles: Sequence[Bundle]) -> None:
        started = time.perf_counter()
        if self.served.front.swap(bundles):
            self.usage.swapped(time.perf_counter() - started)
            self.metrics.reloads.inc()
            _served(self.metrics, self.usage, self.every)
            channel = self.served.channel
            log(f"serving {sum(len(b['prompts']) for b in bundles)} prompts"
                + (f" of channel {channel}" if channel else "") + " from "
                + ", ".join(f"{b['package']['name']}@{(b['source'].get('commit') or '')[:12]}"
                            for b in bundles))

    def start(self) -> None:
        self.served.start(self.swapped)
        from promptops.serve.follow import Follower  # loaded by build() already

        if isinstance(self.served.follower, Follower):  # HEAD polled from the event loop
            import asyncio

            self.served.follower.poll_from(asyncio.get_running_loop())
        if self.remote is not None:
            self.remote.start()
        if self.settler is not None:  # every channel assembled: what is served, frozen
            self.settler.start(collect=True)  # (collector.Settler) before the first request

    def stop(self) -> None:
        if self.remote is not None:
            self.remote.stop()
        self.served.stop()
        if self.tracing is not None:
            self.tracing.shutdown()  # export what is buffered


def _app(views: Views, config: HttpConfig, metrics: Metrics,
         auth: StaticTokens | JwtTokens | None, life: _Channel, usage: Usage, *,
         with_ui: bool) -> HttpApp:
    """One channel's HttpApp; the first channel's serves the web catalog with ``with_ui``
    (``--ui``: docs/ui.md)."""
    from promptops.serve.transports.http import HttpApp

    ui = None
    if with_ui:
        from promptops.ui.mount import ui_app

        ui = ui_app(lambda: views.bundles, usage)
    app = HttpApp(views, config, auth=auth, metrics=metrics, on_start=life.start,
                  on_stop=life.stop, ui=ui)
    app.usage = usage
    return app


def _remote(options: ServeOptions, every: list[Served[Views]]
            ) -> tuple[Remote | None, list[Path]]:
    """``--repo``: the clone (made now) and the package folders inside it. A failed fetch
    is news for every channel's clients (``every``, filled as they are assembled)."""
    dirs = options.folders
    if not options.repo or options.bundle:
        return None, dirs
    from promptops.serve.remote import Remote

    def notify(news: News) -> None:
        for served in every:
            served.reporter.notify(news)

    remote = Remote(options.repo, poll_s=options.poll, log=log,
                    channels=bool(options.channel), notify=notify)
    remote.clone()
    return remote, [remote.directory / d for d in dirs]


def _webhook(options: ServeOptions, remote: Remote | None
             ) -> Callable[[dict[str, str], bytes], int] | None:
    """``POST /hooks/git``'s handler with ``--webhook-secret-env``: a verified delivery
    wakes the remote's fetch (one fetch brings every channel's refs)."""
    if not options.webhook_secret_env:
        return None
    secret = os.environ.get(options.webhook_secret_env)
    if not secret:
        raise UsageError(f"--webhook-secret-env {options.webhook_secret_env}: the variable "
                         "is not set or empty")
    from promptops.serve.remote import verify_webhook

    def webhook(headers: dict[str, str], body: bytes) -> int:
        if not verify_webhook(secret, headers, body):
            return 401
        if remote is not None:
            remote.wake()
        return 202

    return webhook


def _tracing() -> Tracing | None:
    """OpenTelemetry tracing when the OTEL_* variables ask for it (docs/observability.md);
    nothing is imported otherwise."""
    from promptops.serve.tracing import wanted

    if not wanted():
        return None
    try:
        from promptops.serve.tracing import Tracing

        return Tracing()
    except ImportError as exc:
        log(f"warning: OTEL_EXPORTER_OTLP_* is set but tracing needs the [otel] extra "
            f"(pip install 'promptops-mcp[otel]'): {exc}; serving without traces")
        return None


def _auth(args: ServeOptions) -> StaticTokens | JwtTokens | None:
    from promptops.serve.auth import JwtTokens, StaticTokens, read_access_file

    if args.jwks_url or args.jwks_file:
        if not args.audience:
            raise UsageError("OAuth mode needs --audience (our canonical resource URI)")
        scopes = read_access_file(args.tokens)[1] if args.tokens else {}
        return JwtTokens(audience=args.audience, issuer=args.issuer, jwks_url=args.jwks_url,
                         jwks_file=args.jwks_file, required_scopes=args.require_scope,
                         scope_map=scopes)
    if args.tokens:
        return StaticTokens(args.tokens)
    return None


def _connection_bounds(args: ServeOptions) -> dict[str, object]:
    """uvicorn's protocol settings for the byte, time and connection bounds (limits.py)."""
    args.check_bounds()
    _room_for(args.max_connections)
    try:
        from promptops.serve.limits import protocol
    except ImportError:  # no httptools: h11's own head bound, and no time bounds
        return {"http": "h11", "h11_max_incomplete_event_size": args.max_header_bytes,
                "limit_concurrency": args.max_connections}
    return {"http": protocol(max_header_bytes=args.max_header_bytes,
                             header_timeout_s=args.header_timeout,
                             body_timeout_s=args.body_timeout,
                             max_connections=args.max_connections)}


def _room_for(connections: int) -> None:
    """Raise the open-file limit so ``connections`` sockets fit beside the process's own
    files (a refused accept would be the kernel's EMFILE, logged per attempt), or say why
    the bound cannot be reached."""
    try:
        import resource
    except ImportError:  # not POSIX
        return
    from promptops.serve.log import log

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = connections + 256
    if soft != resource.RLIM_INFINITY and soft < need:
        target = need if hard == resource.RLIM_INFINITY else min(need, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError):
            target = soft
        if target < need:
            log(f"warning: --max-connections {connections} needs {need} open files; the "
                f"limit is {target} (raise it with ulimit -n)")


def create_app(argv: list[str] | None = None, gate: Gate | None = None
               ) -> HttpApp | ChannelApps:
    """The ASGI app for ``argv`` (default: ``$PROMPTOPS_SERVE_ARGS``, shell-quoted).

    The factory to name is ``promptops.__main__:create_app``, which passes lint's gate.
    """
    if argv is None:
        argv = shlex.split(os.environ.get("PROMPTOPS_SERVE_ARGS", ""))
    # "--http=" (empty): the bind is the ASGI server's; a bare "--http" would take a PATH
    return build(ServeOptions.parse(["--http=", *argv]), gate)


def http_main(argv: list[str], gate: Gate | None = None) -> int:
    """The command: options, the app, uvicorn. A :class:`PromptopsError` escapes to
    ``serve_main``, the one error path of both transports."""
    try:
        options = ServeOptions.parse(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    # Until uvicorn takes over, and after it gives the handlers back (it re-raises the
    # signal it caught once it is done): a SIGTERM is a request to stop, never a crash.
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda s, f: None)
    bounds = _connection_bounds(options)
    app = build(options, gate)
    import uvicorn

    host, port = app.config.host, app.config.port
    config = uvicorn.Config(app, host=host, port=port, lifespan="on", access_log=False,
                            **bounds,  # type: ignore[arg-type]
                            log_level="warning", timeout_graceful_shutdown=max(
                                1, int(options.shutdown_timeout)),
                            timeout_keep_alive=5, backlog=2048, server_header=False,
                            # X-Forwarded-For names the client (per-client stream bounds,
                            # the access log) only when the operator says who the proxy is
                            proxy_headers=options.forwarded_allow_ips is not None,
                            forwarded_allow_ips=options.forwarded_allow_ips or "127.0.0.1")
    server = uvicorn.Server(config)
    try:
        server.run()
    except OSError as exc:
        raise PromptopsError(f"cannot serve on {host}:{port}: {exc}") from None
    except SystemExit:
        # uvicorn exits 3 (our bug status) when it cannot bind, having logged why: a taken
        # port is a failure to report, not a bug; a failed lifespan (ours) stays a bug
        if server.started or getattr(server.lifespan, "should_exit", False):
            raise
        raise PromptopsError(f"cannot serve on {host}:{port} (uvicorn's line above says "
                             "why)") from None
    sys.stderr.flush()
    return 0
