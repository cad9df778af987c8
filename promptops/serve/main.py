"""`promptops serve`: the stdio front door - options, then assemble, then the transport.

argparse rather than typer: MCP clients spawn this on every start, and the serving path
imports only the standard library, the bundle reader and the renderer. Nothing here
answers a message: :mod:`~promptops.serve.options` reads the arguments (the same for
both transports), :func:`~promptops.serve.assemble.assemble` fills the
:class:`~promptops.serve.catalog.Catalog` of one :class:`~promptops.serve.server.Server`
and wires the follower's news to it, and the stdio transport carries the one session of
this process. ``--http`` goes to the HTTP front door (:mod:`promptops.serve.http`).
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from promptops.errors import PromptopsError
from promptops.serve.log import log
from promptops.serve.options import ServeOptions, wants_http
from promptops.serve.transports.stdio import Signals

NOTICE_DELAY_S = 0.5  # HEAD mode's note on uncommitted changes waits this long after start

if TYPE_CHECKING:
    from promptops.serve.background import Gate


def serve_main(argv: list[str], gate: Gate | None = None) -> int:
    """``gate``: what refuses a commit (the entry point passes lint's, as `build` applies).

    The one error path of both transports: a :class:`PromptopsError` is one ``error:``
    line on stderr and its exit code (:class:`~promptops.errors.ExitCode`); anything else
    escapes to the entry point's handler (promptops/error_handler.py)."""
    if "-h" in argv or "--help" in argv:  # one page for both transports (serve/help.py)
        from promptops.serve.help import text

        sys.stdout.write(text())
        return 0
    try:
        if wants_http(argv):
            from promptops.serve.http import http_main  # the team server: its own module

            return http_main(argv, gate)
        return _stdio(argv, gate)
    except PromptopsError as exc:
        log(f"error: {exc}")
        return exc.exit_code


def _stdio(argv: list[str], gate: Gate | None) -> int:
    signals = Signals()  # first: a SIGTERM while bundles load must not kill the process
    signals.install()
    try:
        try:
            options = ServeOptions.parse(argv)
        except SystemExit as exc:  # argparse already printed usage or help
            return int(exc.code or 0)
        options.check()
        return _run(options, signals, gate)
    finally:
        Signals.hold()  # until exit: see Signals.hold
        Signals.ignore()  # and through interpreter shutdown, whatever thread: Signals.ignore


def _run(options: ServeOptions, signals: Signals, gate: Gate | None) -> int:
    from promptops.pipeline import collector
    from promptops.serve.assemble import assemble, settings
    from promptops.serve.catalog import Catalog
    from promptops.serve.server import Server
    from promptops.serve.transports.stdio import Output, serve

    answers = settings(options)
    channel = options.channel[-1] if options.channel else None  # stdio serves one
    # The served set is loaded (parsed, checked, indexed) with the collector off until it
    # is frozen: its passes over the JSON being parsed find nothing to free (a bundle is
    # acyclic), ~2% of a cold start's instructions at 1,000 prompts.
    with collector.paused():
        served = assemble(options, gate, lambda bundles: Server(Catalog(bundles), answers),
                          channel=channel)
        settler = collector.Settler()  # the served set out of the collector's passes,
        # now and after every swap
        settler.start(collect=served.follower is not None and served.follower.built())
    server = served.front
    snap = server.catalog.snapshot
    names = ", ".join(f"{b['package']['name']} {b['package']['version']}" for b in snap.bundles)
    mode = " (working tree, development mode: following saves)" if options.worktree else (
        f" (channel {channel}, followed)" if channel else "")
    log(f"serving {len(snap.names)} prompts from {names or 'no packages'}{mode}")
    if not (options.bundle or options.worktree) and options.ref is None and channel is None:
        import threading

        # Once the first answers are out: its import (of the watcher and subprocess) and
        # its `git status` spawn would otherwise take the interpreter from the initialize
        # reply.
        notice = threading.Timer(NOTICE_DELAY_S, _dirty_notice, (options.folders,))
        notice.daemon = True
        notice.start()
    out = Output(1)
    if served.follower is not None:  # its warm-up waits for the client's first requests
        served.follower.idle_for = out.idle_for
        served.follower.settler = settler
    served.start(server.swap)
    try:
        settled = serve(server, out, 0, signals)
    finally:
        served.stop()
    if not settled:  # a request was still being answered: do not wait for it
        _flush()
        os._exit(0)
    return 0


def _dirty_notice(paths: list[Path]) -> None:
    """HEAD mode's note on uncommitted changes (run by a timer after start)."""
    from promptops.serve.watch import dirty_notice

    dirty_notice(paths, log)


def _flush() -> None:
    for stream in (sys.stderr, sys.stdout):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
