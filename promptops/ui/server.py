"""Run the UI on 127.0.0.1 with uvicorn (the `http` extra), and follow saves in worktree mode.

The socket is bound here, before uvicorn starts, so ``--port 0`` works and the printed URL
names the port the kernel chose. Only loopback is ever bound: the UI has no
authentication of its own (``serve --http --ui`` is the way to share it).
"""

from __future__ import annotations

import signal
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path

from promptops.errors import UsageError
from promptops.ui.app import UiApp, loopback_hosts
from promptops.ui.site import Site

HOST = "127.0.0.1"


def bind(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
    except OSError as exc:
        sock.close()
        raise UsageError(f"cannot listen on {HOST}:{port}: {exc.strerror}") from None
    sock.listen(128)
    return sock


def follow(site: Site, stop: threading.Event, log: Callable[[str], None]) -> threading.Thread:
    """Rebuild the site after each burst of saves in its package folders (watchfiles)."""
    from watchfiles import watch

    def loop() -> None:
        for _changes in watch(*site.folders, stop_event=stop, debounce=150, step=50,
                              raise_interrupt=False):
            site.reload()
            log(f"rebuilt after a save (generation {site.generation})")

    thread = threading.Thread(target=loop, name="promptops-ui-watch", daemon=True)
    thread.start()
    return thread


def head_follower(site: Site, log: Callable[[str], None], every_s: float = 2.0, *,
                  background: bool = True) -> Callable[[], None]:
    """A refresh for HEAD mode: at most every ``every_s`` seconds, a request checks whether
    HEAD moved and rebuilds if so, in a thread of its own (``background``), so no request
    waits for a build; the open page's poll of /api/generation then reloads it."""
    last = [time.monotonic()]
    lock = threading.Lock()

    def check() -> None:
        try:
            if site.head_moved():
                site.reload()
                log(f"rebuilt at the new HEAD (generation {site.generation})")
        finally:
            lock.release()

    def refresh() -> None:
        now = time.monotonic()
        if now - last[0] < every_s or not lock.acquire(blocking=False):
            return
        last[0] = now
        if background:
            threading.Thread(target=check, name="promptops-ui-head", daemon=True).start()
        else:
            check()

    return refresh


def run(root: Path, *, worktree: bool, port: int, announce: Callable[[str], None],
        log: Callable[[str], None], open_browser: bool) -> None:
    """Build, bind, print the URL, serve until interrupted."""
    try:
        import uvicorn
    except ImportError:
        raise UsageError("promptops ui needs the http extra: "
                         "pip install 'promptops-mcp[http]'") from None
    sock = bind(port)  # a port in use is said at once, before a long build
    try:
        site = Site(root, worktree=worktree)
    except BaseException:
        sock.close()
        raise
    real_port = sock.getsockname()[1]
    url = f"http://{HOST}:{real_port}/"
    app = UiApp(site, hosts=loopback_hosts(real_port),
                refresh=None if worktree else head_follower(site, log))
    stop = threading.Event()
    if worktree:
        follow(site, stop, log)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off",
                            timeout_graceful_shutdown=2)
    server = uvicorn.Server(config)
    announce(url)
    if open_browser:
        import webbrowser

        webbrowser.open(url)
    if hasattr(signal, "pthread_sigmask"):  # the UI runs until told to stop: a mask it
        # inherited (a parent that held SIGINT/SIGTERM back) must not make it deaf to that
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        server.run(sockets=[sock])
    finally:
        stop.set()
        sock.close()
