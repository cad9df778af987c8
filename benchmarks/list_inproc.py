"""prompts/list in process at any size: the first page's CPU and the whole paging's.

    python benchmarks/list_inproc.py PKG [PKG ...] [--collector gc|freeze|off]

PKG is a package folder in a git repository whose build cache holds its HEAD (a `promptops
serve PKG` started once fills it); several are served together, as ``growth.py``'s ``many``
layout serves its packages (``promptops serve p00 p01 ...``). The served set is loaded as
serve loads it (``Follower`` from the cache), a ``Server`` answers ``initialize`` and then
every ``prompts/list`` page, each through ``Server.handle`` (no pipe, no encoding): CPU
(``process_time``) of the first page and of the pages after it, and the cycle collector's
passes per generation. With ``--collector freeze`` the served set is frozen first, as
``promptops serve`` does since session 9 (``collector.Settler.start``); ``off`` disables the
collector (the floor); ``gc`` leaves it as a plain process has it (before session 9). One
figure per process: the first page is first only once.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path
from typing import Any


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pkg", type=Path, nargs="+")
    ap.add_argument("--collector", choices=("gc", "freeze", "off"), default="freeze")
    a = ap.parse_args()
    from promptops.serve.catalog import Catalog
    from promptops.serve.follow import Follower
    from promptops.serve.methods import Settings
    from promptops.serve.server import Server

    follower = Follower(a.pkg, ref=None, log=lambda m: None)
    server = Server(Catalog(follower.initial()), Settings())
    session = server.open(lambda message: None)

    def call(i: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        reply = server.handle(session, {"jsonrpc": "2.0", "id": i, "method": method,
                                        "params": params})[0]
        assert isinstance(reply, dict), reply
        return reply

    call(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "list_inproc", "version": "1"}})
    server.handle(session, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    if a.collector == "freeze":
        gc.freeze()
    elif a.collector == "off":
        gc.disable()
    passes0 = [s["collections"] for s in gc.get_stats()]
    c0 = time.process_time()
    cursor = call(1, "prompts/list", {})["result"].get("nextCursor")
    c1 = time.process_time()
    pages = 1
    while cursor:
        pages += 1
        cursor = call(pages, "prompts/list", {"cursor": cursor})["result"].get("nextCursor")
    c2 = time.process_time()
    passes = [s["collections"] - p for s, p in zip(gc.get_stats(), passes0, strict=True)]
    print(f"{a.collector}: first page {(c1 - c0) * 1e3:.2f} ms CPU; the {pages - 1} pages after "
          f"it {(c2 - c1) * 1e3:.0f} ms CPU ({(c2 - c1) * 1e3 / max(1, pages - 1):.3f} ms a page); "
          f"collector passes by generation {passes}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
