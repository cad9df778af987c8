"""The protocol core of one process: one catalog, any number of sessions.

:class:`Server` is what a transport talks to (it is the
:class:`~promptops.serve.transports.Dispatcher` every transport is typed against): it
opens a :class:`~promptops.serve.session.Session` per connection, answers each parsed
message for a session - the envelope read by :mod:`~promptops.serve.jsonrpc`, the era
chosen by the session, the method looked up in :data:`~promptops.serve.methods.METHODS`,
answered from one snapshot of the :class:`~promptops.serve.catalog.Catalog` - and ends
a session with the results that close its open streams. Nothing in it knows bytes,
pipes or HTTP, so stdio, HTTP and in-process tests drive the same code.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

from promptops.serve.catalog import Catalog, Snapshot
from promptops.serve.jsonrpc import (
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    Json,
    Notification,
    Outbound,
    Request,
    RequestId,
    RpcError,
    Send,
    batch_problem,
    error,
    null_id,
    read,
    reply,
    run_batch,
    valid_id,
)
from promptops.serve.methods import (
    FAILURES,
    SERVER_INFO,
    SESSION_METHODS,
    STATELESS_METHODS,
    Call,
    Method,
    Settings,
    Subscribe,
    not_found,
    rpc_error,
    tools_on,
)
from promptops.serve.revisions import (
    LATEST_SESSION,
    LATEST_STATELESS,
    META_SERVER,
    META_SUB,
    SESSION,
    STATELESS,
    allows_batches,
    null_for_unknown_id,
)
from promptops.serve.session import Session, envelope
from promptops.serve.wire import Sealed

if TYPE_CHECKING:
    from promptops.pipeline.bundle_types import Bundle
    from promptops.serve.usage import Usage


class Server:
    """Answers messages for sessions over one catalog (see the module docstring)."""

    def __init__(self, catalog: Catalog, settings: Settings | None = None) -> None:
        self.catalog = catalog
        self.settings = settings or Settings()
        self._lock = threading.Lock()
        self._sessions: dict[Session, None] = {}
        self.usage: Usage | None = None  # per-prompt counters (serve --http; usage.py)
        # the one session every stateless request runs on (see stateless()): ended, so
        # nothing opens on it
        self.shared = Session(_discard, catalog, STATELESS)
        self.shared.end()
        # a prompt's shared traceability _meta (a Sealed, one per bundle) -> the same with
        # the stateless era's serverInfo added, made once (see answer); by identity
        self._metas: dict[int, tuple[Json, Sealed]] = {}

    # ---- sessions ---------------------------------------------------------------------
    def open(self, send: Send) -> Session:
        """A new session whose client ``send`` reaches (replies go back through the caller)."""
        session = Session(send, self.catalog)
        with self._lock:
            self._sessions[session] = None
        return session

    def stateless(self, msg: Json, checked: tuple[Json, str]) -> list[Json]:
        """:meth:`handle` of one request the transport found stateless (by
        :func:`~promptops.serve.revisions.request_era`) and whose envelope it already read
        (``checked``: :func:`~promptops.serve.session.envelope`'s client capabilities and
        revision, so its error came first, as HTTP's stateless exchange must answer).

        Answered on one session of that era shared by every such request: a stateless
        request changes nothing a session holds (its methods are those of
        :data:`~promptops.serve.methods.METHODS` that never write one; the one that opens
        a stream, ``subscriptions/listen``, is given a session of its own by the
        transport), and this one is ended from the start, so nothing can open on it. A
        session made and ended per request was ~9,000 instructions (issue 26). (HTTP's
        usual request, read by :func:`~promptops.serve.jsonrpc.usual`, goes to
        :meth:`answer` on :attr:`shared` directly.)"""
        item = read(msg)
        if isinstance(item, Request):  # _one's usual case without its call (~1,000)
            return self.answer(self.shared, item.method, item.id, item.params, checked)
        return self._one(self.shared, msg, checked=checked)

    def close(self, session: Session) -> list[Json]:
        """End ``session``: the results that close each of its listen streams, in order."""
        with self._lock:
            self._sessions.pop(session, None)
        return [reply(sid, {"resultType": "complete",
                            "_meta": {META_SUB: sid, META_SERVER: SERVER_INFO}})
                for sid in session.end()]

    # ---- process-wide -----------------------------------------------------------------
    def swap(self, bundles: Sequence[Bundle]) -> bool:
        """Serve ``bundles`` from now on; a set that cannot be served keeps the last good one."""
        try:
            return self.catalog.swap(bundles)
        except Exception as exc:  # a colliding reload: keep the last good snapshot
            self.log("error", f"reload refused, still serving the previous bundles: {exc}")
            return False

    def log(self, level: str, message: str) -> None:
        """A notifications/message to every session-era client that hears ``level``, and
        to every 2026-07-28 listen stream that asked for it (its ``_meta`` logLevel)."""
        with self._lock:
            sessions = list(self._sessions)
        for session in sessions:
            session.log(level, message)
        self.catalog.log(level, message)

    # ---- messages ---------------------------------------------------------------------
    def handle(self, session: Session, message: object) -> list[Outbound]:
        """Replies to one parsed message (a batch array gives one array reply)."""
        if not isinstance(message, list):
            replies = self._one(session, message)
            if len(replies) == 1 and "id" in replies[0]:  # the usual reply: nothing to finish
                return [replies[0]]
            return [self._finish(session, r) for r in replies]
        if not (session.era is SESSION and allows_batches(session.revision)):
            return [self.reject(session, RpcError(
                INVALID_REQUEST, "JSON-RPC batches are only part of 2025-03-26"))]
        problem = batch_problem(message)
        if problem is not None:
            return [self.reject(session, problem)]
        replies = run_batch(message, lambda item: self._one(session, item, in_batch=True),
                            self.settings.batch_seconds)
        return [[self._finish(session, r) for r in replies]] if replies else []

    def reject(self, session: Session, err: RpcError) -> Json:
        """The error for a message whose id cannot be known (parse errors and the like)."""
        return self._finish(session, error(None, err.code, err.message, err.data))

    def _finish(self, session: Session, out: Json) -> Json:
        """``out`` as this session's revision writes a reply whose id is unknown."""
        if "id" in out or session.era is not SESSION:  # the usual case, first
            return out
        return null_id(out) if null_for_unknown_id(session.revision) else out

    def _one(self, session: Session, msg: object, *, in_batch: bool = False,
             checked: tuple[Json, str] | None = None) -> list[Json]:
        item = read(msg)
        if isinstance(item, Request):
            if in_batch and item.method == "initialize":
                return [error(item.id, INVALID_REQUEST, "initialize must not be part of a batch")]
            return self.answer(session, item.method, item.id, item.params, checked)
        if isinstance(item, Notification):
            self._notification(session, item)
            return []
        return [] if item is None else [item]

    def answer(self, session: Session, name: str, rid: RequestId, params: Json,
               checked: tuple[Json, str] | None = None) -> list[Json]:
        """The replies to one request - the method ``name``, id ``rid`` and ``params`` of
        the :class:`Request` :func:`~promptops.serve.jsonrpc.read` made, or that
        :func:`~promptops.serve.jsonrpc.usual` read - its result, or the error its
        :class:`RpcError` names.

        The one home of a request's answer: :meth:`_one` (every message), :meth:`stateless`
        and the HTTP transport's usual request of either era (which read it while reading
        the body, without a :class:`Request` object: ~2,000 instructions, issue 26) all
        come here. The error's catch and the answer are one frame."""
        try:
            era = session.era  # once chosen, admit() only returns it
            if era is None:
                era = session.admit(name, params)
            if era is None:  # a ping before the connection chose its era: answered, nothing chosen
                return [reply(rid, {})]
            method = (STATELESS_METHODS if era is STATELESS else SESSION_METHODS).get(name)
            if method is None:
                method = self._tool_method(name)
            if method is None:
                rev = LATEST_STATELESS if era is STATELESS else session.revision or LATEST_SESSION
                raise RpcError(METHOD_NOT_FOUND, not_found(name, rev))
            if era is STATELESS:  # the envelope as the transport read it, else read here
                caps, rev = checked if checked is not None else envelope(params)
            else:  # a session's request carries no client capabilities: one shared empty
                caps, rev = _NO_CAPS, session.revision or LATEST_SESSION
            snap: Snapshot = self.catalog.snapshot  # one snapshot for the whole request
            usage = self.usage
            try:
                count = None if usage is None else usage.runs.get(name)
                if count is None:
                    out = method.handler(session, snap, params,
                                         Call(rid, rev, caps, self.settings))
                else:  # counted (usage.py): Usage.run, or its prompts/get path directly
                    out = count(name, method.handler, session, snap, params,
                                Call(rid, rev, caps, self.settings))
            except FAILURES as exc:
                raise rpc_error(exc) from exc
            if isinstance(out, Subscribe):
                session.listen(out.subscription)
                return [out.acknowledgement]  # goes out instead of a result: the stream stays open
            if era is STATELESS:
                out.setdefault("resultType", "complete")
                meta = out.get("_meta", _NO_META)
                if type(meta) is Sealed:  # a get's: the merged copy made once per bundle
                    known = self._metas.get(id(meta))
                    out["_meta"] = known[1] if known is not None and known[0] is meta else \
                        self._served_meta(meta)
                else:
                    out["_meta"] = {**meta, META_SERVER: SERVER_INFO}
            return [{"jsonrpc": "2.0", "id": rid, "result": out}]  # reply(), without its call
        except RpcError as exc:
            return [error(rid, exc.code, exc.message, exc.data)]

    def _served_meta(self, meta: Sealed) -> Sealed:
        """``{**meta, serverInfo}`` for a shared ``_meta``, remembered with ``meta`` (held,
        so its id is not reused while remembered): the same keys, order and values as the
        dict a reply built each time (~1,000 instructions a stateless get, issue 26); a
        Sealed, so no reply can change it for the others."""
        if len(self._metas) >= 1024:  # bundles of replaced snapshots: start again
            self._metas.clear()
        merged = Sealed({**meta, META_SERVER: SERVER_INFO})
        self._metas[id(meta)] = (meta, merged)
        return merged

    def _tool_method(self, name: str) -> Method | None:
        """tools/list and tools/call, when the served snapshot offers a tool view (off the
        prompt path: asked only for a method the table does not answer)."""
        if not name.startswith("tools/") or not tools_on(self.catalog.snapshot, self.settings):
            return None
        from promptops.serve.tools import TOOL_METHODS  # only when a tool is asked for

        return TOOL_METHODS.get(name)

    def _notification(self, session: Session, note: Notification) -> None:
        if note.method == "notifications/initialized":
            session.mark_initialized()
        elif note.method == "notifications/cancelled":
            rid = note.params.get("requestId")
            if valid_id(rid):  # anything else cannot name a request of ours: ignored
                session.cancel(rid)


# Empty objects made once, not per request (~300 instructions each, issue 26): a
# session-era request's client capabilities (Sealed: nothing may change them), and a
# result's absent _meta (only ever copied: {**meta, ...})
_NO_CAPS = Sealed({})
_NO_META: Json = {}


def _discard(message: Outbound) -> None:
    """The shared stateless session's ``send``: a stateless request has no stream of its
    own (``subscriptions/listen`` gets a session with one)."""
