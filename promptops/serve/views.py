"""Per-caller visibility as separate catalogs: what a caller cannot see does not exist.

The serve core answers every method from one :class:`~promptops.serve.catalog.Snapshot`,
so the surest way to make a hidden prompt absent from *every* method - list, get,
complete, resources, cursors, ``list_changed`` - is to give each distinct visibility its
own :class:`~promptops.serve.server.Server` over its own catalog, filled with bundles
filtered down to what that visibility allows. No handler has to remember to filter, and
a request for a hidden prompt gets exactly the -32602 "unknown prompt" that a prompt
which was never written gets: no name, no arguments, no timing of a different path.

A view is keyed by its sorted pattern tuple (``PACKAGE`` or ``PACKAGE/PROMPT-GLOB``), so
two tokens that see the same thing share one catalog. Views are made on first use and
all of them are swapped on every reload. A package with no visible prompt is dropped
from the view whole, resources included; a package with some keeps only the resources
its visible prompts embed.
When visibility is filtered, results carry ``cacheScope: private`` (they vary per caller);
with authentication on (``private``) every view does, the unfiltered one too: the answer
is decided per credential, so a shared cache must not keep it for another caller, which
is what the ``Cache-Control: private`` the HTTP transport sends says as well.
"""

from __future__ import annotations

import fnmatch
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

from promptops.serve.auth import EVERYTHING
from promptops.serve.catalog import Catalog
from promptops.serve.server import Server

if TYPE_CHECKING:
    from promptops.pipeline.bundle_types import Bundle
    from promptops.serve.methods import Settings
    from promptops.serve.usage import Usage


def visible(bundle: Bundle, see: tuple[str, ...]) -> Bundle | None:
    """``bundle`` cut down to the prompts ``see`` allows, or None if none are."""
    if see == EVERYTHING:
        return bundle
    pkg = bundle["package"]["name"]
    globs: list[str] = []
    for pattern in see:
        head, sep, tail = pattern.partition("/")
        if fnmatch.fnmatchcase(pkg, head):
            globs.append(tail if sep else "*")
    prompts = [p for p in bundle["prompts"]
               if any(fnmatch.fnmatchcase(p["name"], g) for g in globs)]
    if not prompts:
        return None
    out = bundle.copy()
    out["prompts"] = prompts
    # Only the files its visible prompts embed: a resource of a hidden prompt is as absent
    # as the prompt (listed nowhere, "not found" on read).
    embedded = {m["file"] for p in prompts for m in p["messages"] if "file" in m}
    out["resources"] = {path: res for path, res in bundle["resources"].items()
                        if path in embedded}
    out["package"] = {**bundle["package"], "cacheScope": "private"}
    return out


class Views:
    """One server per visibility over the same bundles; swapped together."""

    def __init__(self, bundles: Sequence[Bundle], settings: Settings, *,
                 private: bool = False) -> None:
        self.settings = settings
        self.private = private  # authentication is on: every answer is per principal
        self._bundles = list(bundles)
        self._lock = threading.Lock()
        self._servers: dict[tuple[str, ...], Server] = {}
        self.usage: Usage | None = None  # given to every view's server (see count())
        self.everything = self.server(EVERYTHING)

    @property
    def bundles(self) -> list[Bundle]:
        return self._bundles

    def server(self, see: tuple[str, ...]) -> Server:
        found = self._servers.get(see)
        if found is not None:
            return found
        with self._lock:
            found = self._servers.get(see)
            if found is None:
                found = self._servers[see] = Server(Catalog(self._filtered(see)), self.settings)
                found.usage = self.usage
        return found

    def count(self, usage: Usage) -> None:
        """Count prompt usage with ``usage`` in every view, present and future."""
        with self._lock:
            self.usage = usage
            for server in self._servers.values():
                server.usage = usage

    def _filtered(self, see: tuple[str, ...]) -> list[Bundle]:
        shown = [b for b in (visible(b, see) for b in self._bundles) if b is not None]
        if not self.private:
            return shown
        return [b if b["package"].get("cacheScope") == "private"
                else {**b, "package": {**b["package"], "cacheScope": "private"}}
                for b in shown]

    def swap(self, bundles: Sequence[Bundle]) -> bool:
        """Serve ``bundles`` in every view; False when the full set did not change."""
        with self._lock:
            self._bundles = list(bundles)
            servers = list(self._servers.items())
        changed = False
        for see, server in servers:
            changed = server.swap(self._filtered(see)) or changed
        return changed

    def log(self, level: str, message: str) -> None:
        """A notifications/message to the callers who see everything: the follower's news
        names files and commits a caller restricted to some prompts must not learn of."""
        self.everything.log(level, message)
