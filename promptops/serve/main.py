"""`promptops serve`: parse arguments, load bundles, run the stdio loop.

argparse rather than typer: MCP clients spawn this on every start, and the serving path
imports only the standard library, the bundle reader and the renderer.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from promptops.errors import PromptopsError

if TYPE_CHECKING:
    from promptops.serve.rpc import Json
    from promptops.serve.stdio import Signals

USAGE = """\
promptops serve [PATH ...] [--bundle FILE ...] [--ref REV] [--worktree] [--page-size N]
                [--ttl-ms N] [--key-file FILE]

Serve MCP prompts over stdio (newline-delimited JSON-RPC on stdin/stdout, logs on
stderr). PATH mode serves each package at its repository's HEAD (or --ref) and follows
HEAD; --worktree (alias --dev) serves the working tree and follows every save;
--bundle serves verified bundle files that never change."""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="promptops serve", usage=USAGE, add_help=True)
    p.add_argument("paths", nargs="*", type=Path, help="package folders (default: .)")
    p.add_argument("--bundle", action="append", type=Path, default=[], metavar="FILE",
                   help="a built bundle to serve (repeatable); not combined with PATH")
    p.add_argument("--ref", help="serve this commit and do not follow HEAD")
    p.add_argument("--worktree", "--dev", action="store_true",
                   help="development mode: serve the working tree, uncommitted edits "
                        "included, and reload on every save")
    p.add_argument("--page-size", type=int, default=100, metavar="N",
                   help="prompts per prompts/list page (default 100)")
    p.add_argument("--ttl-ms", type=int, default=60_000, metavar="N",
                   help="ttlMs on 2026-07-28 cacheable results (default 60000)")
    p.add_argument("--key-file", type=Path, metavar="FILE",
                   help="key (at least 32 bytes) that signs requestState and cursors, shared "
                        "by servers that must accept each other's (default: "
                        "$PROMPTOPS_SERVE_KEY_FILE, else random per process)")
    return p


def _log(message: str) -> None:
    try:
        sys.stderr.write(f"promptops serve: {message}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def serve_main(argv: list[str]) -> int:
    from promptops.serve.stdio import Signals

    signals = Signals()  # first: a SIGTERM while bundles load must not kill the process
    signals.install()
    try:
        return _main(argv, signals)
    finally:
        Signals.hold()  # until exit: see Signals.hold


def _main(argv: list[str], signals: Signals) -> int:
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:  # argparse already printed usage or help
        return int(exc.code or 0)
    if args.page_size < 1 or args.ttl_ms < 0:
        _log("error: --page-size must be at least 1 and --ttl-ms at least 0")
        return 2
    if args.bundle and (args.paths or args.ref):
        _log("error: --bundle serves fixed bundles; it cannot be combined with PATH or --ref")
        return 2
    if args.worktree and (args.bundle or args.ref):
        _log("error: --worktree serves the working tree; it cannot be combined with "
             "--bundle or --ref")
        return 2
    try:
        return _run(args, signals)
    except PromptopsError as exc:
        _log(f"error: {exc}")
        return exc.exit_code


def _run(args: Any, signals: Signals) -> int:
    from promptops.serve.protocol import Server
    from promptops.serve.signing import Signer
    from promptops.serve.stdio import Output, serve

    signer = Signer.configured(args.key_file)
    out = Output(1)
    holder: list[Server] = []

    def log(message: str) -> None:
        _log(message)
        if holder:  # also to a handshake client that enabled logging
            holder[0].log("warning", message)

    follower: Any = None
    if args.bundle:
        from promptops.pipeline.bundle import load_bundle

        bundles = [load_bundle(path) for path in args.bundle]
    elif args.worktree:
        from promptops.serve.watch import Worktree

        follower = Worktree(args.paths or [Path(".")], log=log)
        bundles = follower.initial()
    else:
        from promptops.serve.follow import Follower

        follower = Follower(args.paths or [Path(".")], ref=args.ref, log=log)
        bundles = follower.initial()
    server = Server(cast("list[Json]", bundles), send=out.send, page_size=args.page_size,
                    ttl_ms=args.ttl_ms, signer=signer)
    holder.append(server)
    names = ", ".join(f"{b['package']['name']} {b['package']['version']}" for b in bundles)
    mode = " (working tree, development mode: following saves)" if args.worktree else ""
    _log(f"serving {len(server.snapshot.names)} prompts from {names or 'no packages'}{mode}")
    if not args.bundle and not args.worktree and args.ref is None:
        from promptops.serve.watch import dirty_notice

        dirty_notice(args.paths or [Path(".")], _log)
    if follower is not None and args.ref is None:
        def on_change(bundles: list[Any]) -> None:
            server.swap(bundles)

        follower.start(on_change)
    try:
        settled = serve(server, out, 0, signals)
    finally:
        if follower is not None:
            follower.stop()
    if not settled:  # a request was still being answered: do not wait for it
        _flush()
        os._exit(0)
    return 0


def _flush() -> None:
    for stream in (sys.stderr, sys.stdout):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
