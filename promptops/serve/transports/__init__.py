"""Transports: how messages reach the protocol core, and its replies and notifications a client.

A transport owns framing and connections, and nothing else: bytes in (newline-delimited
on stdio, HTTP bodies and SSE streams later), parsed with
:func:`promptops.serve.jsonrpc.parse` (bounded), handed to a :class:`Dispatcher`, and
what it returns written back. Everything it needs from the core is this protocol, so a
new transport is one new module here and nothing else changes.

How a transport uses it:

* :meth:`Dispatcher.open` makes a :class:`~promptops.serve.session.Session` for each
  conversation, with the ``send`` that reaches its client unprompted (notifications:
  ``list_changed``, log messages, listen acknowledgements). stdio opens one for its pipe.
  An HTTP transport opens one per ``Mcp-Session-Id`` in the session era (``send`` goes to
  that session's GET stream), and one per ``subscriptions/listen`` request of the
  stateless era (``send`` is that request's SSE stream: the listen
  stream registers itself in the catalog as a subscription with that ``send``, so a swap
  reaches it). :func:`promptops.serve.revisions.request_era` says which era a request
  opens; ``session.era`` and ``session.revision`` say what a session negotiated. Any
  other stateless request, its envelope read, goes to ``Server.stateless``, which
  answers it without a session of its own.
* :meth:`Dispatcher.handle` answers one parsed message for a session: the replies to write
  back, in order (none for a notification; one array for a batch). A message that cannot
  be parsed or is too long gets :meth:`Dispatcher.reject` with the ``RpcError`` that
  :func:`~promptops.serve.jsonrpc.parse` raised (or :func:`~promptops.serve.jsonrpc.oversized`).
* :meth:`Dispatcher.close` ends a session - its client left, its stream closed (an HTTP
  cancel), the session expired, or the server shuts down - and returns the results that
  end its open listen streams; a transport that can still reach the client writes them.
  Every opened session must be closed.

``handle`` may run in any thread, one message per session at a time; ``send`` may be
called from another thread (the git follower's) at any time, so it must be thread-safe.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from promptops.serve.jsonrpc import Json, Outbound, RpcError, Send
    from promptops.serve.session import Session


class Dispatcher(Protocol):
    """What a transport needs from the protocol core (promptops.serve.server.Server)."""

    def open(self, send: Send) -> Session:
        """A new session; ``send`` reaches its client with what nobody asked for."""
        ...

    def handle(self, session: Session, message: object) -> list[Outbound]:
        """The replies to one parsed message of ``session``."""
        ...

    def reject(self, session: Session, err: RpcError) -> Json:
        """The reply to a message that could not be read (its id is unknown)."""
        ...

    def close(self, session: Session) -> list[Json]:
        """End ``session``; the final results of its open streams."""
        ...
