"""`promptops serve`: parse arguments, then wire the catalog, the core and a transport.

argparse rather than typer: MCP clients spawn this on every start, and the serving path
imports only the standard library, the bundle reader and the renderer. Nothing here
answers a message: the follower (or the bundle files) fills the
:class:`~promptops.serve.catalog.Catalog`, :class:`~promptops.serve.server.Server` answers
for sessions over it, and the stdio transport carries the one session of this process.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from promptops.errors import PromptopsError
from promptops.serve.transports.stdio import Signals, log

NOTICE_DELAY_S = 0.5  # HEAD mode's note on uncommitted changes waits this long after start

if TYPE_CHECKING:
    from promptops.serve.follow import Follower, Gate
    from promptops.serve.watch import Worktree

USAGE = """\
promptops serve [PATH ...] [--bundle FILE ...] [--ref REV] [--channel NAME] [--worktree]
                [--page-size N] [--ttl-ms N] [--key-file FILE] [--tools [catalog|per-prompt]]

Serve MCP prompts over stdio (newline-delimited JSON-RPC on stdin/stdout, logs on
stderr). PATH mode serves each package at its repository's HEAD (or --ref) and follows
HEAD; --channel serves the release a channel points at and follows the channel
(docs/channels.md); --worktree (alias --dev) serves the working tree and follows every save;
--bundle serves verified bundle files that never change."""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="promptops serve", usage=USAGE, add_help=True)
    p.add_argument("paths", nargs="*", type=Path, metavar="PATH",
                   help="package folders (default: .)")
    p.add_argument("--bundle", action="append", type=Path, default=[], metavar="FILE",
                   help="a built bundle to serve (repeatable); not combined with PATH")
    p.add_argument("--ref", metavar="REV", help="serve this commit and do not follow HEAD")
    p.add_argument("--channel", metavar="NAME",
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
    return p


def serve_main(argv: list[str], gate: Gate | None = None) -> int:
    """``gate``: what refuses a commit (the entry point passes lint's, as `build` applies)."""
    if any(a == "--http" or a.startswith("--http=") for a in argv):
        from promptops.serve.http import http_main  # the team server: its own module

        return http_main(argv, gate)
    signals = Signals()  # first: a SIGTERM while bundles load must not kill the process
    signals.install()
    try:
        return _main(argv, signals, gate)
    finally:
        Signals.hold()  # until exit: see Signals.hold
        Signals.ignore()  # and through interpreter shutdown, whatever thread: Signals.ignore


def _main(argv: list[str], signals: Signals, gate: Gate | None = None) -> int:
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:  # argparse already printed usage or help
        return int(exc.code or 0)
    if args.page_size < 1 or args.ttl_ms < 0:
        log("error: --page-size must be at least 1 and --ttl-ms at least 0")
        return 2
    if args.bundle and (args.paths or args.ref or args.channel):
        log("error: --bundle serves fixed bundles; it cannot be combined with PATH, --ref "
            "or --channel")
        return 2
    if args.channel and args.ref:
        log("error: --channel follows a channel, --ref serves a fixed commit: pick one")
        return 2
    if args.worktree and (args.bundle or args.ref or args.channel):
        log("error: --worktree serves the working tree; it cannot be combined with "
            "--bundle or --ref")
        return 2
    try:
        return _run(args, signals, gate)
    except PromptopsError as exc:
        log(f"error: {exc}")
        return exc.exit_code


def _run(args: argparse.Namespace, signals: Signals, gate: Gate | None = None) -> int:
    from promptops.serve.catalog import Catalog
    from promptops.serve.methods import Settings
    from promptops.serve.server import Server
    from promptops.serve.signing import Signer
    from promptops.serve.transports.stdio import Output, serve

    settings = Settings(page_size=args.page_size, ttl_ms=args.ttl_ms, tools=args.tools,
                        signer=Signer.configured(args.key_file))
    out = Output(1)
    follower: Follower | Worktree | None = None
    if args.bundle:
        from promptops.pipeline.bundle import load_bundle

        server = Server(Catalog([load_bundle(path) for path in args.bundle]), settings)
    elif args.worktree:
        _require_packages(args.paths or [Path(".")])
        from promptops.serve.watch import Worktree

        server = Server(Catalog(), settings)
        follower = Worktree(args.paths or [Path(".")], log=log, notify=server.log)
        server.catalog.swap(follower.initial())
    else:
        _require_packages(args.paths or [Path(".")])
        from promptops.serve.follow import Follower

        server = Server(Catalog(), settings)  # filled below: the follower logs to its sessions
        follower = Follower(args.paths or [Path(".")], ref=args.ref, log=log, gate=gate,
                            notify=server.log, channel=args.channel)
        server.catalog.swap(follower.initial())
    snap = server.catalog.snapshot
    names = ", ".join(f"{b['package']['name']} {b['package']['version']}" for b in snap.bundles)
    mode = " (working tree, development mode: following saves)" if args.worktree else (
        f" (channel {args.channel}, followed)" if args.channel else "")
    log(f"serving {len(snap.names)} prompts from {names or 'no packages'}{mode}")
    if not args.bundle and not args.worktree and args.ref is None and args.channel is None:
        import threading

        # Once the first answers are out: its import (of the watcher and subprocess) and
        # its `git status` spawn would otherwise take the interpreter from the initialize
        # reply.
        notice = threading.Timer(NOTICE_DELAY_S, _dirty_notice, (args.paths or [Path(".")],))
        notice.daemon = True
        notice.start()
    if follower is not None and args.ref is None:
        follower.start(server.swap)
    try:
        settled = serve(server, out, 0, signals)
    finally:
        if follower is not None:
            follower.stop()
    if not settled:  # a request was still being answered: do not wait for it
        _flush()
        os._exit(0)
    return 0


def _dirty_notice(paths: list[Path]) -> None:
    """HEAD mode's note on uncommitted changes (run by a timer after start)."""
    from promptops.serve.watch import dirty_notice

    dirty_notice(paths, log)


def _require_packages(paths: list[Path]) -> None:
    """A folder without promptops.yaml is a usage error naming the packages below it."""
    from promptops.errors import UsageError

    for path in paths:
        if not (path / "promptops.yaml").is_file():
            from promptops.fsutil import not_a_package_hint

            raise UsageError(f"{path} is not a package folder (no promptops.yaml)"
                             f"{not_a_package_hint(path)}; pass the package folder")


def _flush() -> None:
    for stream in (sys.stderr, sys.stdout):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
