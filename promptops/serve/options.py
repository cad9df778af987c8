"""Every option of `promptops serve`, stdio and HTTP, declared once.

:func:`parser` is the one argparse builder: the options both transports take (what to
serve and how it is answered), stdio's own (``--worktree``), and HTTP's group (bind,
bounds, auth, remote) only when ``--http`` is asked for, so a stdio start never declares
thirty options it cannot use and ``serve --worktree --http`` stays a usage error.
:class:`ServeOptions` is what the front doors and :func:`~promptops.serve.assemble.assemble`
read: frozen, with the bind resolved (``--http PATH`` is the bare flag and a package) and
:meth:`ServeOptions.check` the one home of the usage rules. argparse, not typer: MCP
clients spawn ``serve`` on every start (uvicorn's ``Config`` and CLI have the same split).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING

from promptops.errors import UsageError

if TYPE_CHECKING:
    import argparse

USAGE = """\
promptops serve [PATH ...] [--bundle FILE ...] [--ref REV] [--channel NAME] [--worktree]
                [--page-size N] [--ttl-ms N] [--key-file FILE] [--tools [catalog|per-prompt]]

Serve MCP prompts over stdio (newline-delimited JSON-RPC on stdin/stdout, logs on
stderr). PATH mode serves each package at its repository's HEAD (or --ref) and follows
HEAD; --channel serves the release a channel points at and follows the channel
(docs/channels.md); --worktree (alias --dev) serves the working tree and follows every save;
--bundle serves verified bundle files that never change."""

HTTP_USAGE = """\
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

_CHANNEL = r"[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?"  # compiled on use


def wants_http(argv: Sequence[str]) -> bool:
    """Whether ``argv`` asks for the HTTP transport (``--http``, bare or with a value)."""
    return any(a == "--http" or a.startswith("--http=") for a in argv)


def duration(text: str) -> float:
    """``30s``, ``5m``, ``250ms``, ``1h`` or a bare number of seconds."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*", text)
    if not m:
        import argparse

        raise argparse.ArgumentTypeError(f"not a duration: {text!r} (e.g. 30s, 5m, 250ms)")
    return float(m.group(1)) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600}[m.group(2) or "s"]


def parser(*, http: bool = False) -> argparse.ArgumentParser:
    """The parser of `promptops serve` (with ``http``: of `promptops serve --http`)."""
    import argparse  # not on a plain stdio start (see _plain)

    p = argparse.ArgumentParser(prog="promptops serve", usage=HTTP_USAGE if http else USAGE)
    p.add_argument("paths", nargs="*", type=Path, metavar="PATH",
                   help="package folders (default: .)")
    if http:
        _http_bind(p)
    p.add_argument("--bundle", action="append", type=Path, default=[], metavar="FILE",
                   help="a built bundle to serve (repeatable); not combined with PATH")
    p.add_argument("--ref", metavar="REV", help="serve this commit and do not follow HEAD")
    if http:
        p.add_argument("--repo", metavar="URL[@BRANCH]", help="follow a remote repository")
        p.add_argument("--channel", metavar="NAME", action="append", default=[],
                       help="serve and follow the release channel NAME (docs/channels.md); "
                       "repeat it to serve several, the first at --path, each at "
                       "/channels/NAME/mcp")
        _http_remote(p)
    else:
        p.add_argument("--channel", metavar="NAME", action="append", default=[],
                       help="serve the release channel NAME (or PACKAGE/NAME) points at, and "
                            "follow it: a promote or rollback is announced as list_changed")
        p.add_argument("--worktree", "--dev", action="store_true",
                       help="development mode: serve the working tree, uncommitted edits "
                            "included, and reload on every save")
    p.add_argument("--page-size", type=int, default=100, metavar="N",
                   help="prompts per prompts/list page (default 100)")
    p.add_argument("--tools", nargs="?", const="catalog", choices=("catalog", "per-prompt"),
                   metavar="VIEW", help="also offer the prompts as tools: `catalog` (the "
                   "default: list_prompts and get_prompt) or `per-prompt` (one tool per "
                   "prompt); see docs/serve.md")
    p.add_argument("--ttl-ms", type=int, default=60_000, metavar="N",
                   help="ttlMs on 2026-07-28 cacheable results (default 60000)")
    p.add_argument("--key-file", type=Path, metavar="FILE",
                   help="key (at least 32 bytes) that signs requestState and cursors, shared "
                        "by servers that must accept each other's (default: "
                        "$PROMPTOPS_SERVE_KEY_FILE, else random per process)")
    if http:
        _http_team(p)
    return p


def _http_bind(p: argparse.ArgumentParser) -> None:
    p.add_argument("--http", nargs="?", const="", default=None, metavar="[HOST:]PORT",
                   help="serve over HTTP (default 127.0.0.1:8080)")
    p.add_argument("--host", help="address to bind (overrides --http's host)")
    p.add_argument("--port", type=int, help="port to bind (overrides --http's port)")
    p.add_argument("--path", default="/mcp", help="the MCP endpoint path (default /mcp)")


def _http_remote(p: argparse.ArgumentParser) -> None:
    p.add_argument("--poll", type=duration, default=30.0, metavar="DURATION",
                   help="fetch interval for --repo (default 30s; backs off on failure)")
    p.add_argument("--webhook-secret-env", metavar="NAME",
                   help="environment variable holding the webhook secret (enables "
                        "POST /hooks/git: GitHub X-Hub-Signature-256 or GitLab X-Gitlab-Token)")


def _http_team(p: argparse.ArgumentParser) -> None:
    """Auth, the Origin/Host guard and the byte, time and connection bounds."""
    p.add_argument("--tokens", type=Path, metavar="FILE", help="static bearer tokens (hashed)")
    p.add_argument("--jwks-url", metavar="URL", help="OAuth: the issuer's JWKS URL")
    p.add_argument("--jwks-file", type=Path, metavar="FILE", help="OAuth: a JWKS file")
    p.add_argument("--audience", metavar="URI", help="OAuth: our canonical resource URI")
    p.add_argument("--issuer", metavar="ISS", help="OAuth: the expected issuer")
    p.add_argument("--require-scope", action="append", default=[], metavar="SCOPE",
                   help="OAuth: a scope every token must carry (repeatable)")
    p.add_argument("--allow-origin", action="append", default=[], metavar="ORIGIN",
                   help="an extra allowed Origin (repeatable; * allows every origin)")
    p.add_argument("--allow-host", action="append", default=[], metavar="HOST",
                   help="an extra allowed Host (repeatable)")
    p.add_argument("--max-body", type=int, default=4 * 1024 * 1024, metavar="BYTES",
                   help="request body limit, 413 beyond (default 4 MiB)")
    p.add_argument("--session-idle", type=duration, default=1800.0, metavar="DURATION",
                   help="a session without requests or open stream ends after this "
                        "(default 30m)")
    p.add_argument("--max-sessions", type=int, default=10_000, metavar="N",
                   help="open sessions, 503 beyond (default 10000)")
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
    p.add_argument("--header-timeout", type=duration, default=10.0, metavar="DURATION",
                   help="time to send a request's headers (default 10s; then 408)")
    p.add_argument("--body-timeout", type=duration, default=30.0, metavar="DURATION",
                   help="time to send a request's body (default 30s; then 408)")
    p.add_argument("--max-connections", type=int, default=1000, metavar="N",
                   help="open connections (default 1000; one more gets 503)")
    p.add_argument("--shutdown-timeout", type=duration, default=10.0, metavar="DURATION",
                   help="bound on finishing in-flight requests at SIGTERM (default 10s)")
    p.add_argument("--no-access-log", action="store_true",
                   help="no JSON access log lines on stderr")
    p.add_argument("--ui", action="store_true",
                   help="also serve the web catalog and playground at / (docs/ui.md), "
                        "behind the same tokens and visibility")


class ServeOptions:
    """Every option of `promptops serve`; HTTP's keep their defaults on stdio.

    ``http`` is None on stdio; with ``--http`` it is the spec given ("" for the bare
    flag), and ``host``/``port`` are the resolved bind. Frozen. A plain class whose class
    attributes are the defaults, not a dataclass: generating a 40-field dataclass costs
    every stdio start ~2 ms.
    """

    paths: tuple[Path, ...] = ()
    bundle: tuple[Path, ...] = ()
    ref: str | None = None
    channel: tuple[str, ...] = ()
    worktree: bool = False
    page_size: int = 100
    tools: str | None = None
    ttl_ms: int = 60_000
    key_file: Path | None = None
    # HTTP only
    http: str | None = None
    host: str = "127.0.0.1"
    port: int = 8080
    path: str = "/mcp"
    repo: str | None = None
    poll: float = 30.0
    webhook_secret_env: str | None = None
    tokens: Path | None = None
    jwks_url: str | None = None
    jwks_file: Path | None = None
    audience: str | None = None
    issuer: str | None = None
    require_scope: tuple[str, ...] = ()
    allow_origin: tuple[str, ...] = ()
    allow_host: tuple[str, ...] = ()
    max_body: int = 4 * 1024 * 1024
    session_idle: float = 1800.0
    max_sessions: int = 10_000
    max_sessions_per_client: int | None = None
    forwarded_allow_ips: str | None = None
    max_streams: int = 256
    replica_id: str | None = None
    max_header_bytes: int = 64 * 1024
    header_timeout: float = 10.0
    body_timeout: float = 30.0
    max_connections: int = 1000
    shutdown_timeout: float = 10.0
    no_access_log: bool = False
    ui: bool = False

    def __init__(self, **given: object) -> None:
        for key, value in given.items():
            if key not in ServeOptions.__annotations__:
                raise TypeError(f"ServeOptions has no option {key!r}")
            object.__setattr__(self, key, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"ServeOptions are frozen: {name} cannot be set")

    def __repr__(self) -> str:
        return f"ServeOptions({', '.join(f'{k}={v!r}' for k, v in vars(self).items())})"

    @classmethod
    def parse(cls, argv: Sequence[str]) -> ServeOptions:
        """The options of ``argv`` (argparse exits, having printed why, on bad usage;
        a bad ``--http`` bind raises :class:`UsageError`)."""
        http = wants_http(argv)
        plain = None if http else _plain(argv)
        found = vars(plain if plain is not None else parser(http=http).parse_args(list(argv)))
        for key, value in found.items():
            if isinstance(value, list):
                found[key] = tuple(value)
        if http:  # the bind: --http's [HOST:]PORT, each part overridden by --host, --port
            host, port = found.pop("host"), found.pop("port")
            paths, bound, at = _bind(found["http"] or "", found["paths"])
            found.update(paths=paths, host=host or bound, port=at if port is None else port)
        return cls(**found)

    @property
    def folders(self) -> list[Path]:
        """The package folders to serve (``.`` when none is named)."""
        return list(self.paths) or [Path(".")]

    def check(self) -> None:
        """Raise :class:`UsageError` for options that do not go together (each transport
        with its own words, as before they were declared once)."""
        if self.page_size < 1 or self.ttl_ms < 0:
            raise UsageError("--page-size must be at least 1 and --ttl-ms at least 0")
        if self.http is None:
            self._check_stdio()
        else:
            self._check_http()

    def _check_stdio(self) -> None:
        if self.bundle and (self.paths or self.ref or self.channel):
            raise UsageError("--bundle serves fixed bundles; it cannot be combined with PATH, "
                             "--ref or --channel")
        if self.channel and self.ref:
            raise UsageError("--channel follows a channel, --ref serves a fixed commit: pick "
                             "one")
        if self.worktree and (self.bundle or self.ref or self.channel):
            raise UsageError("--worktree serves the working tree; it cannot be combined with "
                             "--bundle or --ref")

    def _check_http(self) -> None:
        if self.channel and (self.ref or self.bundle):
            raise UsageError("--channel follows a channel; it cannot be combined with --ref or "
                             "--bundle")
        if self.bundle and (self.paths or self.ref or self.repo):
            raise UsageError("--bundle serves fixed bundles; it cannot be combined with PATH, "
                             "--ref or --repo")
        channels = self.channel
        if len(set(channels)) != len(channels):
            raise UsageError("--channel: each channel once (" + ", ".join(channels) + ")")
        for name in channels:
            if len(channels) > 1 and (not re.fullmatch(_CHANNEL, name) or ".." in name):
                raise UsageError(f"--channel {name!r}: a channel name (or PACKAGE/CHANNEL) is "
                                 "letters, digits, '.', '_' and '-'")

    def check_bounds(self) -> None:
        """HTTP's byte, time and connection bounds (checked before anything is built)."""
        if min(self.max_header_bytes, self.max_connections) < 1 or \
                min(self.header_timeout, self.body_timeout) <= 0:
            raise UsageError("--max-header-bytes and --max-connections must be at least 1, "
                             "--header-timeout and --body-timeout above 0")


def _plain(argv: Sequence[str]) -> SimpleNamespace | None:
    """What :func:`parser` makes of a plain stdio command line, without argparse; else None.

    ``[PATH ...] [--bundle FILE ...]`` (no token starting with ``-`` but ``--bundle``) is
    how MCP clients spawn stdio serve. argparse would make the same of it, but importing
    it (with gettext, locale and shutil, which its help formatter imports on each
    ``add_argument``) and declaring the options is a tenth of a cold start. Any other line,
    including one argparse refuses, goes to argparse, which words what is wrong.
    ``tests/serve/test_plain_options.py`` compares both on many lines.
    """
    paths: list[Path] = []
    bundles: list[Path] = []
    i, n = 0, len(argv)
    while i < n and argv[i] and argv[i][0] != "-":
        paths.append(Path(argv[i]))
        i += 1
    while i < n:
        if argv[i] != "--bundle" or i + 1 == n or not argv[i + 1] or argv[i + 1][0] == "-":
            return None
        bundles.append(Path(argv[i + 1]))
        i += 2
    return SimpleNamespace(paths=paths, bundle=bundles, ref=None, channel=[], worktree=False,
                           page_size=100, tools=None, ttl_ms=60_000, key_file=None)


def _bind(spec: str, paths: tuple[Path, ...]) -> tuple[tuple[Path, ...], str, int]:
    """``--http``'s value as (paths, host, port): ``--http PATH`` is the bare flag followed
    by a package folder."""
    host, port = "127.0.0.1", 8080
    if spec and not re.fullmatch(r"(.*:)?\d+", spec) and Path(spec).exists():
        return (Path(spec), *paths), host, port
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
    return paths, host, port
