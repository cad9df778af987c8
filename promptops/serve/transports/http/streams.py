"""Every open SSE response of the app, in one registry: quotas, the pump, the drain.

Three kinds of stream share it: a 2026-07-28 ``subscriptions/listen`` response
(``listen``), a session's GET stream (``session``) and a 2024-11-05 ``/sse`` stream
(``sse``). Each client (its principal, or its address without auth) may hold
``max_streams`` at once (429 past that); while draining, none opens (503). A stream's
frames are queued from any thread (the git follower's notifications arrive through
``call_soon_threadsafe``) and written by :meth:`StreamRegistry.pump`, with a keep-alive
comment after ``keepalive_s`` of silence; a reader that falls :data:`MAX_QUEUE` events
behind has its stream ended. :meth:`StreamRegistry.drain` (shutdown) gives each listen
stream its final ``SubscriptionsListenResult`` and ends every stream.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

from promptops.serve import jsonrpc
from promptops.serve.transports.http.base import Encode, HttpError, Receive, SendAsgi

if TYPE_CHECKING:
    from promptops.serve.jsonrpc import Outbound
    from promptops.serve.metrics import Metrics
    from promptops.serve.server import Server
    from promptops.serve.session import Session

MAX_QUEUE = 1000  # events a stream's reader may fall behind before the stream is ended
END = object()  # queue sentinel: end the stream
_DISCONNECT = object()  # queue sentinel: the client left


def sse_frame(encode: Encode, message: Outbound, event_id: str | None = None) -> bytes:
    head = b"id: " + event_id.encode() + b"\n" if event_id else b""
    return head + b"event: message\ndata: " + encode(message) + b"\n\n"


class Stream:
    """One open SSE response: frames queued from any thread, ended once."""

    __slots__ = ("client", "encode", "final", "kind", "loop", "queue", "server", "session")

    def __init__(self, kind: str, client: str, loop: asyncio.AbstractEventLoop,
                 encode: Encode) -> None:
        self.kind, self.client, self.loop, self.encode = kind, client, loop, encode
        self.queue: asyncio.Queue[object] = asyncio.Queue()
        self.session: Session | None = None
        self.server: Server | None = None
        self.final = False  # the stream ends with the final results of its session

    def put(self, item: object) -> None:
        """From the loop thread; ends a stream whose reader stopped reading."""
        if self.queue.qsize() >= MAX_QUEUE:
            while not self.queue.empty():
                self.queue.get_nowait()
            self.queue.put_nowait(END)
            return
        self.queue.put_nowait(item)

    def end(self) -> None:
        """From the loop thread: the stream ends after what is queued."""
        self.put(END)

    def send(self, message: Outbound) -> None:
        """The core's ``send`` for this stream: thread-safe."""
        frame = sse_frame(self.encode, message)
        with contextlib.suppress(RuntimeError):  # a closed loop: the server is gone
            self.loop.call_soon_threadsafe(self.put, frame)


class StreamRegistry:
    """The open streams, counted per client; opened, pumped, closed and drained here."""

    def __init__(self, *, max_streams: int, keepalive_s: float, encode: Encode,
                 metrics: Metrics | None = None, dumps: Encode | None = None) -> None:
        self.max_streams, self.keepalive_s = max_streams, keepalive_s
        self.encode, self.metrics = encode, metrics
        # encode's bytes, or a TypeError where encode writes another way (Codec.dumps)
        self.dumps = dumps if dumps is not None else encode
        self.streams: dict[Stream, None] = {}
        self.per_client: dict[str, int] = {}
        self.draining = False
        self.loop: asyncio.AbstractEventLoop | None = None  # set at the app's lifespan start

    def frame(self, message: Outbound) -> bytes:
        return sse_frame(self.encode, message)

    def open(self, kind: str, client: str) -> Stream:
        """A new stream of ``client``: HttpError 503 while draining, 429 past its quota."""
        if self.draining:
            raise HttpError(503, jsonrpc.INVALID_REQUEST, "Service Unavailable: shutting down",
                            headers=[(b"retry-after", b"1")])
        if self.per_client.get(client, 0) >= self.max_streams:
            raise HttpError(429, jsonrpc.INVALID_REQUEST, f"Too Many Requests: at most "
                            f"{self.max_streams} open streams per client")
        assert self.loop is not None, "the app was not started (ASGI lifespan)"
        stream = Stream(kind, client, self.loop, self.encode)
        self.streams[stream] = None
        self.per_client[client] = self.per_client.get(client, 0) + 1
        if self.metrics is not None:
            self.metrics.streams.labels(kind).inc()
        return stream

    def close(self, stream: Stream) -> None:
        """Forget ``stream`` (once; a second close does nothing)."""
        if self.streams.pop(stream, END) is END:
            return
        left = self.per_client.get(stream.client, 1) - 1
        if left > 0:
            self.per_client[stream.client] = left
        else:
            self.per_client.pop(stream.client, None)
        if self.metrics is not None:
            self.metrics.streams.labels(stream.kind).dec()

    async def pump(self, stream: Stream, receive: Receive, send: SendAsgi) -> str:
        """Write the stream's frames until it ends or its client leaves."""
        watcher = asyncio.ensure_future(_until_disconnect(receive, stream))
        try:
            while True:
                try:
                    async with asyncio.timeout(self.keepalive_s):
                        item = await stream.queue.get()
                except TimeoutError:
                    item = b": keep-alive\n\n"
                if item is END:
                    await send({"type": "http.response.body", "body": b"", "more_body": False})
                    return "ended"
                if item is _DISCONNECT:
                    return "disconnect"
                assert isinstance(item, bytes)
                await send({"type": "http.response.body", "body": item, "more_body": True})
        finally:
            watcher.cancel()

    def drain(self) -> None:
        """Refuse new streams; end every open one, listen streams with their final result."""
        self.draining = True
        for stream in list(self.streams):
            if stream.session is not None and stream.server is not None and stream.final:
                for final in stream.server.close(stream.session):
                    stream.put(self.frame(final))
            stream.end()


async def _until_disconnect(receive: Receive, stream: Stream) -> None:
    while True:
        msg = await receive()
        if msg["type"] == "http.disconnect":
            stream.queue.put_nowait(_DISCONNECT)
            return
