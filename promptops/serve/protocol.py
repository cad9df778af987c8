"""The MCP protocol core: one parsed JSON-RPC message in, the replies out.

Transport-free so it can be driven by the stdio loop, tests or any other pipe. The
connection's era is chosen by its first request: ``initialize`` starts the handshake
era (2024-11-05 .. 2025-11-25); a request carrying the ``_meta`` envelope (or
``server/discover``) starts the stateless 2026-07-28 era. Served data lives in an
immutable :class:`Snapshot` that :meth:`Server.swap` replaces atomically.

A JSON-RPC batch (2025-03-26 only) is bounded as a whole, because one line of it could
otherwise ask for unbounded work: at most :data:`MAX_BATCH` messages (more is one
-32600 error), and once its replies reach :data:`BATCH_REPLY_BYTES` or its requests have
run :data:`BATCH_SECONDS`, each further request is answered with a short -32603 error
instead of being run, so a batch line costs at most one bounded reply.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from promptops.serve import methods, revisions
from promptops.serve.catalog import Snapshot
from promptops.serve.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    META_CAPS,
    META_SERVER,
    META_SUB,
    META_VERSION,
    METHOD_NOT_FOUND,
    SERVER_INFO,
    UNSUPPORTED_VERSION,
    Json,
    Rpc,
    error,
    valid_id,
)
from promptops.serve.signing import Signer
from promptops.serve.wire import encode

LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
BOTH = ("prompts/list", "prompts/get", "completion/complete", "resources/list",
        "resources/read", "resources/templates/list")
HANDSHAKE_METHODS = frozenset({"initialize", "ping", "logging/setLevel", *BOTH})
MODERN_METHODS = frozenset({"server/discover", "subscriptions/listen", *BOTH})
MAX_BATCH = 100  # messages in one batch
BATCH_REPLY_BYTES = 16 * 1024 * 1024  # encoded replies of one batch
BATCH_SECONDS = 10.0  # run time of one batch's requests


class Server:
    """One connection's protocol state over a swappable snapshot of bundles."""

    def __init__(self, bundles: list[Json], *, send: Callable[[Json], None],
                 page_size: int = 100, ttl_ms: int = 60_000,
                 signer: Signer | None = None, batch_seconds: float = BATCH_SECONDS) -> None:
        self._snap = Snapshot.build(bundles)
        self._send = send
        self.signer = signer or Signer.random()
        self.page_size, self.ttl_ms, self.batch_seconds = page_size, ttl_ms, batch_seconds
        self._lock = threading.Lock()
        self.era: str | None = None  # "handshake" | "modern"
        self.revision: str | None = None
        self.initialized = False
        self.log_level: str | None = None
        self._subs: dict[tuple[str, Any], tuple[Any, bool]] = {}

    @property
    def snapshot(self) -> Snapshot:
        return self._snap

    # ---- entry points -------------------------------------------------------------
    def handle(self, message: Any) -> list[Any]:
        """Replies to one parsed message (a batch array gives one array reply)."""
        if not isinstance(message, list):
            return [self._id_null(r) for r in self._one(message)]
        if not (self.era == "handshake" and self.revision == "2025-03-26"):
            return [self.reject(INVALID_REQUEST, "JSON-RPC batches are only part of 2025-03-26")]
        if not message:
            return [self.reject(INVALID_REQUEST, "empty batch")]
        if len(message) > MAX_BATCH:
            return [self.reject(INVALID_REQUEST, f"a batch of {len(message):,} messages is over "
                                f"the limit of {MAX_BATCH}; send fewer at a time")]
        replies = self._batch(message)
        return [replies] if replies else []

    def _batch(self, items: list[Any]) -> list[Any]:
        """Each member's replies, within the batch's reply-size and time budget."""
        replies: list[Any] = []
        size, started, over = 2, time.monotonic(), ""
        for item in items:
            if not over and time.monotonic() - started > self.batch_seconds:
                over = f"its requests ran for {self.batch_seconds:g} s"
            if over and _is_request(item):
                out = [error(item["id"], INTERNAL_ERROR, f"not run: the batch is over its "
                             f"budget ({over}); send the request again on its own")]
            else:
                out = self._one(item, in_batch=True)
            for reply in out:
                n = len(encode(reply)) + 1
                if size + n > BATCH_REPLY_BYTES:
                    over = over or f"its replies reached {BATCH_REPLY_BYTES:,} bytes"
                    reply = error(reply.get("id"), INTERNAL_ERROR, f"reply dropped: the batch "
                                  f"is over its budget ({over}); send the request on its own")
                    n = len(encode(reply)) + 1
                size += n
                replies.append(self._id_null(reply))
        return replies

    def reject(self, code: int, message: str) -> Json:
        """An error for a message whose id cannot be known (parse errors and the like)."""
        reply: Json = self._id_null(error(None, code, message))
        return reply

    def _id_null(self, reply: Any) -> Any:
        """JSON-RPC 2.0 says `"id": null`; 2025-11-25 and later schemas say leave it out.

        Revisions before 2025-11-25 require an id the schema cannot express as unknown, so
        those connections get JSON-RPC's null; everyone else gets the id omitted.
        """
        old = self.era == "handshake" and (self.revision or "") < "2025-11-25"
        if old and isinstance(reply, dict) and "error" in reply and "id" not in reply:
            return {"jsonrpc": "2.0", "id": None, "error": reply["error"]}
        return reply

    def swap(self, bundles: list[Json]) -> bool:
        """Serve ``bundles`` from now on; notify subscribers once if anything changed."""
        try:
            new = Snapshot.build(bundles, self._snap)
        except Exception as exc:  # a colliding reload: keep the last good snapshot
            self.log("error", f"reload refused, still serving the previous bundles: {exc}")
            return False
        with self._lock:
            if new.digests == self._snap.digests:
                return False
            self._snap = new
            legacy = self.era == "handshake" and self.initialized
            subs = [sid for sid, wants in self._subs.values() if wants]
        note: Json = {"jsonrpc": "2.0", "method": "notifications/prompts/list_changed"}
        if legacy:
            self._send(note)
        for sid in subs:
            self._send({**note, "params": {"_meta": {META_SUB: sid}}})
        return True

    def log(self, level: str, message: str) -> None:
        """A notifications/message to a handshake client that asked for this level."""
        want = self.log_level
        if self.era != "handshake" or not self.initialized or want is None:
            return
        if LEVELS.index(level) >= LEVELS.index(want):
            self._send({"jsonrpc": "2.0", "method": "notifications/message",
                        "params": {"level": level, "logger": "promptops", "data": message}})

    def close(self) -> list[Json]:
        """The results that end every open subscription, for an orderly shutdown."""
        with self._lock:
            subs, self._subs = list(self._subs.values()), {}
        return [{"jsonrpc": "2.0", "id": sid, "result": {
            "resultType": "complete", "_meta": {META_SUB: sid, META_SERVER: SERVER_INFO}}}
            for sid, _ in subs]

    # ---- dispatch -----------------------------------------------------------------
    def _one(self, msg: Any, in_batch: bool = False) -> list[Any]:
        if not isinstance(msg, dict):
            return [error(None, INVALID_REQUEST, "not a JSON-RPC 2.0 message")]
        method, id_, params = msg.get("method"), msg.get("id"), msg.get("params", {})
        if msg.get("jsonrpc") != "2.0":  # answered to its id when it has one a client can match
            return [error(id_ if valid_id(id_) else None, INVALID_REQUEST,
                          'not a JSON-RPC 2.0 message: "jsonrpc" must be "2.0"')]
        if not isinstance(method, str):
            if "result" in msg or "error" in msg:
                return []  # a response: we never send requests, so nothing to match
            return [error(id_ if valid_id(id_) else None, INVALID_REQUEST, "method missing")]
        if "id" not in msg:
            if isinstance(params, dict):
                self._notification(method, params)
            return []
        if not valid_id(id_):
            return [error(None, INVALID_REQUEST, "id must be a string or an integer")]
        if not isinstance(params, dict):
            return [error(id_, INVALID_PARAMS, "params must be an object")]
        if in_batch and method == "initialize":
            return [error(id_, INVALID_REQUEST, "initialize must not be part of a batch")]
        try:
            result = self._request(method, params, id_)
        except Rpc as exc:
            return [error(id_, exc.code, exc.message, exc.data)]
        if result is None:  # subscriptions/listen: the stream stays open
            return []
        if isinstance(result, list):  # an acknowledgement goes out instead of a result
            return result
        if self.era == "modern":
            result.setdefault("resultType", "complete")
            result["_meta"] = {**result.get("_meta", {}), META_SERVER: SERVER_INFO}
        return [{"jsonrpc": "2.0", "id": id_, "result": result}]

    def _notification(self, method: str, params: Json) -> None:
        if method == "notifications/initialized" and self.era == "handshake":
            self.initialized = True
        elif method == "notifications/cancelled":
            rid = params.get("requestId")
            if valid_id(rid):  # anything else cannot name a request of ours: ignored
                with self._lock:
                    self._subs.pop((type(rid).__name__, rid), None)

    def _request(self, method: str, params: Json, id_: Any) -> Any:
        modern = isinstance(params.get("_meta"), dict) and any(
            str(k).startswith("io.modelcontextprotocol/") for k in params["_meta"])
        if self.era is None:
            if modern or method == "server/discover":
                self.era = "modern"  # an initialize with the envelope too: -32601 below
            elif method == "initialize":
                self.era = "handshake"
            elif method == "ping":
                return {}
            else:
                raise Rpc(INVALID_REQUEST, "not initialized: send initialize first (or, for "
                          f"{revisions.MODERN}, the _meta envelope on every request)")
        known = HANDSHAKE_METHODS if self.era == "handshake" else MODERN_METHODS
        if method not in known:
            rev = (revisions.MODERN if self.era == "modern"
                   else self.revision or revisions.LATEST_HANDSHAKE)
            raise Rpc(METHOD_NOT_FOUND, revisions.why_not_offered(method, rev))
        caps: Json = {}
        if self.era == "modern":
            caps = self._envelope(params)
        snap = self._snap  # one snapshot for the whole request, whatever a reload does
        return methods.call(self, snap, method, params, id_, caps)

    def _envelope(self, params: Json) -> Json:
        meta = params.get("_meta")
        if not isinstance(meta, dict):
            raise Rpc(INVALID_PARAMS, f"missing params._meta (required by {revisions.MODERN})")
        for key in (META_VERSION, META_CAPS):
            if key not in meta:
                raise Rpc(INVALID_PARAMS, f"missing _meta key {key!r}")
        version, caps = meta[META_VERSION], meta[META_CAPS]
        if version != revisions.MODERN:
            raise Rpc(UNSUPPORTED_VERSION, "Unsupported protocol version",
                      {"supported": list(revisions.SUPPORTED), "requested": str(version)})
        if not isinstance(caps, dict):
            raise Rpc(INVALID_PARAMS, f"_meta key {META_CAPS!r} must be an object")
        return caps

    def subscribe(self, id_: Any, wants_prompts: bool) -> None:
        with self._lock:
            key = (type(id_).__name__, id_)
            if key in self._subs:
                raise Rpc(INVALID_REQUEST, f"subscription {id_!r} is already open")
            self._subs[key] = (id_, wants_prompts)


def _is_request(msg: Any) -> bool:
    return (isinstance(msg, dict) and msg.get("jsonrpc") == "2.0"
            and isinstance(msg.get("method"), str) and "id" in msg and valid_id(msg["id"]))
