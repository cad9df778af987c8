"""`promptops serve --http`: the team server, as an ASGI app and as a command.

:func:`create_app` is the importable factory (``uvicorn --factory
promptops.serve.http:create_app``, ``gunicorn -k uvicorn_worker.UvicornWorker
'promptops.serve.http:create_app()'``): called bare, it reads the same options as the
command from ``$PROMPTOPS_SERVE_ARGS``, so every deployment is configured one way.
:func:`http_main` is the command: it builds the app and runs it on uvicorn (httptools and
uvloop when installed) with a graceful-shutdown bound, draining streams on SIGTERM.

Kept apart from ``promptops.serve.main`` so the stdio path never imports uvicorn,
prometheus-client or PyJWT (tests/serve/transports/http/test_cold_path.py checks that).
What is served comes from the same places as on stdio - package folders followed at
their HEAD, fixed ``--bundle`` files - plus ``--repo URL[@BRANCH]``, a remote repository
followed by fetching (:mod:`promptops.serve.remote`).
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import signal
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from promptops.errors import PromptopsError, UsageError

if TYPE_CHECKING:
    from promptops.pipeline.bundle_types import Bundle
    from promptops.serve.auth import JwtTokens, StaticTokens
    from promptops.serve.follow import Follower, Gate
    from promptops.serve.methods import Settings
    from promptops.serve.metrics import Metrics
    from promptops.serve.remote import Remote
    from promptops.serve.tracing import Tracing
    from promptops.serve.transports.channels import ChannelApps
    from promptops.serve.transports.http import HttpApp, HttpConfig
    from promptops.serve.usage import Usage
    from promptops.serve.views import Views

USAGE = """\
promptops serve --http [HOST:]PORT [--path /mcp] [PATH ... | --bundle FILE ... |
                --repo URL[@BRANCH] [--poll 30s] [--webhook-secret-env NAME]] [--channel NAME ...]
                [--tokens FILE] [--jwks-url URL | --jwks-file FILE] [--audience URI]
                [--issuer ISS] [--require-scope S] [--allow-origin O] [--allow-host H]
                [--max-body BYTES] [--session-idle 30m] [--max-streams N] [--replica-id ID]
                [--max-sessions N] [--max-sessions-per-client N] [--max-header-bytes B]
                [--header-timeout 10s] [--body-timeout 30s] [--max-connections N]
                [--forwarded-allow-ips IPS] [--page-size N] [--ttl-ms N] [--key-file FILE]
                [--no-access-log] [--tools [catalog|per-prompt]] [--ui]

Serve MCP prompts over Streamable HTTP (every revision: sessions for 2025-03-26 ..
2025-11-25, stateless 2026-07-28) at http://HOST:PORT/mcp. Logs go to stderr."""


def _duration(text: str) -> float:
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*", text)
    if not m:
        raise argparse.ArgumentTypeError(f"not a duration: {text!r} (e.g. 30s, 5m, 250ms)")
    return float(m.group(1)) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600}[m.group(2) or "s"]


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="promptops serve", usage=USAGE)
    p.add_argument("paths", nargs="*", type=Path, help="package folders (default: .)")
    p.add_argument("--http", nargs="?", const="", default=None, metavar="[HOST:]PORT",
                   help="serve over HTTP (default 127.0.0.1:8080)")
    p.add_argument("--host", help="address to bind (overrides --http's host)")
    p.add_argument("--port", type=int, help="port to bind (overrides --http's port)")
    p.add_argument("--path", default="/mcp", help="the MCP endpoint path (default /mcp)")
    p.add_argument("--bundle", action="append", type=Path, default=[], metavar="FILE")
    p.add_argument("--ref", help="serve this commit and do not follow HEAD")
    p.add_argument("--repo", metavar="URL[@BRANCH]", help="follow a remote repository")
    p.add_argument("--channel", metavar="NAME", action="append", default=None,
                   help="serve and follow the release channel NAME (docs/channels.md); "
                   "repeat it to serve several, the first at --path, each at "
                   "/channels/NAME/mcp")
    p.add_argument("--poll", type=_duration, default=30.0, metavar="DURATION",
                   help="fetch interval for --repo (default 30s; backs off on failure)")
    p.add_argument("--webhook-secret-env", metavar="NAME",
                   help="environment variable holding the webhook secret (enables "
                        "POST /hooks/git: GitHub X-Hub-Signature-256 or GitLab X-Gitlab-Token)")
    p.add_argument("--page-size", type=int, default=100, metavar="N")
    p.add_argument("--tools", nargs="?", const="catalog", choices=("catalog", "per-prompt"),
                   metavar="VIEW", help="also offer the prompts as tools: `catalog` (the "
                   "default: list_prompts and get_prompt) or `per-prompt` (one tool per "
                   "prompt); see docs/serve.md")
    p.add_argument("--ttl-ms", type=int, default=60_000, metavar="N")
    p.add_argument("--key-file", type=Path, metavar="FILE",
                   help="key shared by replicas so cursors work across them")
    p.add_argument("--tokens", type=Path, metavar="FILE", help="static bearer tokens (hashed)")
    p.add_argument("--jwks-url", metavar="URL", help="OAuth: the issuer's JWKS URL")
    p.add_argument("--jwks-file", type=Path, metavar="FILE", help="OAuth: a JWKS file")
    p.add_argument("--audience", metavar="URI", help="OAuth: our canonical resource URI")
    p.add_argument("--issuer", metavar="ISS", help="OAuth: the expected issuer")
    p.add_argument("--require-scope", action="append", default=[], metavar="SCOPE")
    p.add_argument("--allow-origin", action="append", default=[], metavar="ORIGIN")
    p.add_argument("--allow-host", action="append", default=[], metavar="HOST")
    p.add_argument("--max-body", type=int, default=4 * 1024 * 1024, metavar="BYTES")
    p.add_argument("--session-idle", type=_duration, default=1800.0, metavar="DURATION")
    p.add_argument("--max-sessions", type=int, default=10_000, metavar="N")
    p.add_argument("--max-sessions-per-client", type=int, default=None, metavar="N",
                   help="sessions one principal (or address, without tokens) may hold "
                        "(default: a tenth of --max-sessions); at the bound its least recently "
                        "used idle session ends")
    p.add_argument("--forwarded-allow-ips", metavar="IPS",
                   help="trust X-Forwarded-For/-Proto from these proxy addresses (comma-"
                        "separated, or *); by default proxy headers are ignored")
    p.add_argument("--max-streams", type=int, default=256, metavar="N",
                   help="open SSE streams per client (default 256)")
    p.add_argument("--replica-id", metavar="ID",
                   help="prefix session ids with ID. (nginx affinity, docs/http.md)")
    p.add_argument("--max-header-bytes", type=int, default=64 * 1024, metavar="BYTES",
                   help="request line and headers (default 64 KiB; more: 431)")
    p.add_argument("--header-timeout", type=_duration, default=10.0, metavar="DURATION",
                   help="time to send a request's headers (default 10s; then 408)")
    p.add_argument("--body-timeout", type=_duration, default=30.0, metavar="DURATION",
                   help="time to send a request's body (default 30s; then 408)")
    p.add_argument("--max-connections", type=int, default=1000, metavar="N",
                   help="open connections (default 1000; one more gets 503)")
    p.add_argument("--shutdown-timeout", type=_duration, default=10.0, metavar="DURATION")
    p.add_argument("--no-access-log", action="store_true")
    p.add_argument("--ui", action="store_true",
                   help="also serve the web catalog and playground at / (docs/ui.md), "
                        "behind the same tokens and visibility")
    return p


def _bind(args: argparse.Namespace) -> tuple[str, int]:
    host, port = "127.0.0.1", 8080
    spec = args.http or ""
    if spec and not re.fullmatch(r"(.*:)?\d+", spec) and Path(spec).exists():
        args.paths.insert(0, Path(spec))  # `--http PATH`: the bare flag, then a package
        spec = ""
    if spec:
        h, sep, p = spec.rpartition(":")
        if not sep:
            h, p = "", spec
        if h:
            host = h.strip("[]")
        try:
            port = int(p)
        except ValueError:
            raise UsageError(f"--http {spec!r}: expected [HOST:]PORT") from None
    return args.host or host, args.port if args.port is not None else port


def build(args: argparse.Namespace, gate: Gate | None = None) -> HttpApp | ChannelApps:
    """The HttpApp for parsed arguments (nothing bound or started yet); ``gate`` refuses
    commits as in stdio mode (the entry point passes lint's)."""
    from promptops.serve.methods import Settings
    from promptops.serve.metrics import Metrics
    from promptops.serve.signing import Signer
    from promptops.serve.transports.http import HttpConfig
    from promptops.serve.transports.stdio import log
    from promptops.serve.usage import Usage

    if args.page_size < 1 or args.ttl_ms < 0:
        raise UsageError("--page-size must be at least 1 and --ttl-ms at least 0")
    host, port = _bind(args)
    if args.channel and (args.ref or args.bundle):
        raise UsageError("--channel follows a channel; it cannot be combined with --ref or "
                         "--bundle")
    if args.bundle and (args.paths or args.ref or args.repo):
        raise UsageError("--bundle serves fixed bundles; it cannot be combined with PATH, "
                         "--ref or --repo")
    channels: list[str | None] = list(args.channel) if args.channel else [None]
    _check_channels(args.channel or [])
    settings = Settings(page_size=args.page_size, ttl_ms=args.ttl_ms, tools=args.tools,
                        signer=Signer.configured(args.key_file))
    metrics = Metrics()
    tracing = _tracing(log)
    auth = _auth(args)
    remote: Remote | None = None
    dirs = args.paths or [Path(".")]
    if args.repo and not args.bundle:
        from promptops.serve.remote import Remote

        remote = Remote(args.repo, poll_s=args.poll, log=log, channels=bool(args.channel))
        remote.clone()
        dirs = [remote.directory / d for d in dirs]

    webhook = None
    if args.webhook_secret_env:
        secret = os.environ.get(args.webhook_secret_env)
        if not secret:
            raise UsageError(f"--webhook-secret-env {args.webhook_secret_env}: the variable "
                             "is not set or empty")
        from promptops.serve.remote import verify_webhook

        def webhook(headers: dict[str, str], body: bytes) -> int:
            if not verify_webhook(secret, headers, body):
                return 401
            if remote is not None:
                remote.wake()  # one fetch brings every channel's refs
            return 202

    every: list[Views] = []  # each channel's views: /metrics shows what all of them serve
    usage = Usage(tracing=tracing)  # per-prompt counters: /metrics and /usage; spans
    metrics.registry.register(usage)

    def served() -> None:
        bundles = [b for v in every for b in v.bundles]
        metrics.served(bundles)
        usage.serving(bundles)

    apps: list[tuple[str, HttpApp]] = []
    for i, channel in enumerate(channels):
        path = args.path if i == 0 else f"/channels/{channel}{args.path.rstrip('/') or '/mcp'}"
        config = HttpConfig(
            host=host, port=port, path=path, allow_origins=args.allow_origin,
            allow_hosts=args.allow_host, max_body=args.max_body,
            session_idle_s=args.session_idle, max_sessions=args.max_sessions,
            max_sessions_per_client=args.max_sessions_per_client,
            max_streams=args.max_streams,
            replica_id=args.replica_id, access_log=not args.no_access_log,
            resource=args.audience, required_scopes=args.require_scope, issuer=args.issuer,
            webhook=webhook)
        last = i == len(channels) - 1
        app = _channel_app(args, channel, dirs, config, settings, metrics, auth, gate,
                           every, served, remote if last else None,  # started once, last
                           usage=usage, tracing=tracing if last else None,
                           with_ui=bool(args.ui) and i == 0)
        apps.append((channel or "", app))
        log(f"serving {sum(len(b['prompts']) for b in app.views.bundles)} prompts"
            + (f" of channel {channel}" if channel else "") + " over HTTP at "
            f"http://{host if ':' not in host else f'[{host}]'}:{port}{config.path}")
    served()
    if len(apps) == 1:
        return apps[0][1]
    from promptops.serve.transports.channels import ChannelApps

    return ChannelApps(apps)


def _check_channels(channels: list[str]) -> None:
    """Several ``--channel``: distinct, and each usable as a path segment."""
    if len(set(channels)) != len(channels):
        raise UsageError("--channel: each channel once (" + ", ".join(channels) + ")")
    for name in channels:
        if len(channels) > 1 and (not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*"
                                                   r"(/[A-Za-z0-9][A-Za-z0-9._-]*)?", name)
                                  or ".." in name):
            raise UsageError(f"--channel {name!r}: a channel name (or PACKAGE/CHANNEL) is "
                             "letters, digits, '.', '_' and '-'")


def _channel_app(args: argparse.Namespace, channel: str | None, dirs: list[Path],
                 config: HttpConfig, settings: Settings, metrics: Metrics,
                 auth: StaticTokens | JwtTokens | None, gate: Gate | None,
                 every: list[Views], served: Callable[[], None],
                 remote: Remote | None, *, usage: Usage, tracing: Tracing | None,
                 with_ui: bool) -> HttpApp:
    """The HttpApp of one channel (or of HEAD / --ref / --bundle when ``channel`` is None):
    its own follower and views, the shared settings, metrics, auth and usage counters.
    ``tracing`` is given to the last channel's app, which shuts it down (once); the first
    channel's app serves the web catalog with ``with_ui`` (``--ui``: docs/ui.md)."""
    from promptops.serve.transports.http import HttpApp
    from promptops.serve.transports.stdio import log
    from promptops.serve.views import Views

    views: Views
    follower: Follower | None = None
    if args.bundle:
        from promptops.pipeline.bundle import load_bundle

        views = Views([load_bundle(p) for p in args.bundle], settings, private=auth is not None)
    else:
        from promptops.serve.follow import Follower

        def report(message: str) -> None:
            log(message)
            if "does not build" in message:
                metrics.failed.inc()

        # A commit that does not build, and the one that recovers, reach the clients as
        # notifications/message - those who see every prompt: the message names files a
        # token restricted to some prompts must not learn of (docs/http.md).
        heard: list[Views] = []  # the views, once made (the start logs to stderr only)

        def notify(level: str, message: str) -> None:
            for made in heard:
                made.everything.log(level, message)

        follower = Follower(dirs, ref=args.ref, log=report, gate=gate, notify=notify,
                            channel=channel)
        if usage.tracing is not None:
            follower.traced = usage.tracing.rebuild
        views = Views(follower.initial(), settings, private=auth is not None)
        heard.append(views)
        follower.warm_up()  # a team server's first new commit takes the fast path too
    every.append(views)
    views.count(usage.for_channel(channel or ""))  # the channel label (usage.py)

    def swapped(bundles: Sequence[Bundle]) -> None:
        started = time.perf_counter()
        if views.swap(bundles):
            usage.swapped(time.perf_counter() - started)
            metrics.reloads.inc()
            served()
            log(f"serving {sum(len(b['prompts']) for b in bundles)} prompts"
                + (f" of channel {channel}" if channel else "") + " from "
                + ", ".join(f"{b['package']['name']}@{(b['source'].get('commit') or '')[:12]}"
                            for b in bundles))

    def start() -> None:
        if follower is not None and args.ref is None:
            follower.start(swapped)
        if remote is not None:
            remote.start()

    def stop() -> None:
        if remote is not None:
            remote.stop()
        if follower is not None:
            follower.stop()
        if tracing is not None:
            tracing.shutdown()  # export what is buffered

    ui = None
    if with_ui:
        from promptops.ui.mount import ui_app

        ui = ui_app(lambda: views.bundles, usage)
    app = HttpApp(views, config, auth=auth, metrics=metrics, on_start=start, on_stop=stop,
                  ui=ui)
    app.usage = usage
    return app


def _tracing(log: Callable[[str], None]) -> Tracing | None:
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


def _auth(args: argparse.Namespace) -> StaticTokens | JwtTokens | None:
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


def _connection_bounds(args: argparse.Namespace) -> dict[str, object]:
    """uvicorn's protocol settings for the byte, time and connection bounds (limits.py)."""
    if min(args.max_header_bytes, args.max_connections) < 1 or \
            min(args.header_timeout, args.body_timeout) <= 0:
        raise UsageError("--max-header-bytes and --max-connections must be at least 1, "
                         "--header-timeout and --body-timeout above 0")
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
    from promptops.serve.transports.stdio import log

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
    return build(parser().parse_args(["--http=", *argv]), gate)


def http_main(argv: list[str], gate: Gate | None = None) -> int:
    from promptops.serve.transports.stdio import log

    try:
        args = parser().parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    # Until uvicorn takes over, and after it gives the handlers back (it re-raises the
    # signal it caught once it is done): a SIGTERM is a request to stop, never a crash.
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda s, f: None)
    try:
        bounds = _connection_bounds(args)
        app = build(args, gate)
    except PromptopsError as exc:
        log(f"error: {exc}")
        return exc.exit_code
    import uvicorn

    host, port = app.config.host, app.config.port
    config = uvicorn.Config(app, host=host, port=port, lifespan="on", access_log=False,
                            **bounds,  # type: ignore[arg-type]
                            log_level="warning", timeout_graceful_shutdown=max(
                                1, int(args.shutdown_timeout)),
                            timeout_keep_alive=5, backlog=2048, server_header=False,
                            # X-Forwarded-For names the client (per-client stream bounds,
                            # the access log) only when the operator says who the proxy is
                            proxy_headers=args.forwarded_allow_ips is not None,
                            forwarded_allow_ips=args.forwarded_allow_ips or "127.0.0.1")
    server = uvicorn.Server(config)
    try:
        server.run()
    except OSError as exc:  # the port is taken, say
        log(f"error: cannot serve on {host}:{port}: {exc}")
        return 1
    sys.stderr.flush()
    return 0
