"""One client's conversation with the server: its era, revision, handshake and log level.

A :class:`Session` is per connection (stdio has one; an HTTP transport makes one per
``Mcp-Session-Id``, or a throwaway one per stateless request), while the served
:class:`~promptops.serve.catalog.Catalog` is per process. Everything a session knows is
changed only by its own methods, which hold the protocol's rules for it: the era is
chosen by the first request that can choose it (:meth:`Session.admit`), ``initialize``
negotiates the revision once, ``notifications/initialized`` opens the session's own
notification stream, and ``logging/setLevel`` sets what it is told. Handlers call these
methods; none of them writes a session's state itself.

A session also registers its streams in the catalog itself (its own stream, its listen
streams) and removes them when they end, under its lock: a stream cannot be opened on a
session that has ended, so no subscription outlives its session.
"""

from __future__ import annotations

import threading

from promptops.serve.catalog import LEVELS, LIST_CHANGED, Catalog, Subscription
from promptops.serve.jsonrpc import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    UNSUPPORTED_VERSION,
    Json,
    RequestId,
    RpcError,
    Send,
)
from promptops.serve.revisions import (
    LATEST_SESSION,
    LATEST_STATELESS,
    META_CAPS,
    META_VERSION,
    SESSION,
    SESSION_REVISIONS,
    STATELESS_REVISIONS,
    SUPPORTED,
    Era,
    request_era,
)

# What a session-era client hears before it sends logging/setLevel, as the spec lets a
# server decide ("the server MAY decide which messages to send automatically"): Claude
# Desktop and others never set a level, and an author must see a save that does not
# build, and its recovery (issue 24). Only the follower's news is sent at all.
DEFAULT_LEVEL = "info"
_HEARS = frozenset({LIST_CHANGED})  # a new session's stream hears of list changes


class Session:
    """The state of one client connection; ``send`` reaches that client."""

    def __init__(self, send: Send, catalog: Catalog, era: Era | None = None) -> None:
        """``era``: given only by a transport that already chose it by
        :func:`~promptops.serve.revisions.request_era` (HTTP's stateless exchange)."""
        self.send = send
        self._catalog = catalog
        self.era: Era | None = era
        self.revision: str | None = None  # negotiated by initialize (session era only)
        self.initialized = False
        self.log_level: str | None = None
        self._lock = threading.Lock()
        self._ended = False  # by end(): nothing opens on it any more
        self._stream: Subscription | None = None  # the session era's own notifications
        self._listens: dict[tuple[str, object], Subscription] = {}  # by id, 1 apart from "1"
        self._hears = _HEARS  # what the session era's own stream is told
        # the client's name as usage.py counts it, set at its initialize (None before, and
        # on the stateless era's shared session): one attribute read per counted request
        # where a weak dictionary's look-up made a weak reference each time (issue 26)
        self.counted_client: str | None = None

    # ---- the era and the handshake ----------------------------------------------------
    def admit(self, method: str, params: Json) -> Era | None:
        """The era ``method`` is answered in, chosen now if this is the first request.

        None for a ``ping`` before anything was chosen (answered, deciding nothing);
        any other request that cannot choose is refused.
        """
        if self.era is None:
            era = request_era(method, params)
            if era is None:
                if method == "ping":
                    return None
                raise RpcError(INVALID_REQUEST, "not initialized: send initialize first (or, for "
                               f"{LATEST_STATELESS}, the _meta envelope on every request)")
            self.era = era
        return self.era

    def initialize(self, params: Json, also: frozenset[str] = frozenset()) -> str:
        """Negotiate the revision: the client's if we speak it, else our latest.

        ``also``: notifications the session's stream carries beside the prompt list's,
        for capabilities announced in this reply (the tool view's list_changed)."""
        if self.revision is not None:
            raise RpcError(INVALID_REQUEST, "already initialized")
        asked = params.get("protocolVersion")
        if not isinstance(asked, str) or not isinstance(params.get("capabilities", {}), dict):
            self.era = None  # nothing was negotiated: the connection is still undecided
            raise RpcError(INVALID_PARAMS,
                           "initialize needs protocolVersion (a string) and capabilities")
        self.revision = asked if asked in SESSION_REVISIONS else LATEST_SESSION
        self._hears = self._hears | also
        return self.revision

    def mark_initialized(self) -> None:
        """``notifications/initialized``: from now on the client hears of changes."""
        if self.era is not SESSION:
            return
        with self._lock:
            self.initialized = True
            if self._stream is None and not self._ended:
                self._stream = Subscription(None, self._hears, self.send)
                self._catalog.subscribe(self._stream)

    # ---- logging ------------------------------------------------------------------------
    def set_log_level(self, level: object) -> None:
        if not isinstance(level, str) or level not in LEVELS:
            raise RpcError(INVALID_PARAMS, f"unknown log level {level!r}")
        self.log_level = level

    def log(self, level: str, message: str) -> None:
        """A notifications/message, if this is an initialized session-era client that hears
        ``level`` (the one it set, else :data:`DEFAULT_LEVEL`). The stateless era's
        messages go to the listen streams that asked (:meth:`Catalog.log`)."""
        if self.era is not SESSION or not self.initialized:
            return
        if LEVELS.index(level) >= LEVELS.index(self.log_level or DEFAULT_LEVEL):
            self.send({"jsonrpc": "2.0", "method": "notifications/message",
                       "params": {"level": level, "logger": "promptops", "data": message}})

    # ---- subscriptions/listen streams --------------------------------------------------
    def listen(self, sub: Subscription) -> None:
        """Open a subscriptions/listen stream; its id must not be open already."""
        with self._lock:
            if self._ended:  # a request that was still being answered when the session ended
                raise RpcError(INVALID_REQUEST, "the session has ended")
            key = (type(sub.id).__name__, sub.id)
            if key in self._listens:
                raise RpcError(INVALID_REQUEST, f"subscription {sub.id!r} is already open")
            self._listens[key] = sub
            self._catalog.subscribe(sub)

    def cancel(self, request_id: RequestId) -> None:
        """``notifications/cancelled``: end the listen stream of that request, if open."""
        with self._lock:
            sub = self._listens.pop((type(request_id).__name__, request_id), None)
            if sub is not None:
                self._catalog.unsubscribe(sub)

    def end(self) -> list[RequestId]:
        """End every stream; the ids of the listen streams that were open, in order."""
        with self._lock:
            subs = list(self._listens.values())
            if self._stream is not None:
                subs.append(self._stream)
            self._listens, self._stream, self._ended = {}, None, True
            for sub in subs:
                self._catalog.unsubscribe(sub)
        return [sub.id for sub in subs if sub.id is not None]


def envelope(params: Json) -> tuple[Json, str]:
    """The client capabilities and revision of a stateless request's ``_meta`` envelope."""
    meta = params.get("_meta")
    if not isinstance(meta, dict):
        raise RpcError(INVALID_PARAMS, f"missing params._meta (required by {LATEST_STATELESS})")
    for key in (META_VERSION, META_CAPS):
        if key not in meta:
            raise RpcError(INVALID_PARAMS, f"missing _meta key {key!r}")
    version, caps = meta[META_VERSION], meta[META_CAPS]
    if version not in STATELESS_REVISIONS:
        raise RpcError(UNSUPPORTED_VERSION, "Unsupported protocol version",
                       {"supported": list(SUPPORTED), "requested": str(version)})
    if not isinstance(caps, dict):
        raise RpcError(INVALID_PARAMS, f"_meta key {META_CAPS!r} must be an object")
    return caps, version
