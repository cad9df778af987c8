"""OTLP/HTTP export of the spans :mod:`promptops.serve.tracing` records, off the request path.

Why our own: with the OpenTelemetry Python SDK, a sampled ``prompts/get`` cost about six
times its untraced CPU (span objects, attribute validation, context machinery, protobuf
message objects per attribute). Here the request path only appends a small record
(:data:`promptops.serve.tracing.Record`, a tuple) to a deque; this module's thread wakes every
``OTEL_BSP_SCHEDULE_DELAY`` ms (or when a batch is full), encodes the batch straight into
the OTLP protobuf wire format (``ExportTraceServiceRequest``, opentelemetry-proto's
``trace/v1``; ``tests/serve/transports/http/test_usage_tracing.py`` parses our bytes with
the official message classes) and POSTs it to the collector, as the SDK's
``BatchRecordProcessor`` and
OTLP/HTTP exporter do. The encoded attribute blocks are cached: their values are the
bounded labels of :mod:`promptops.serve.usage`, so a batch mostly concatenates bytes.

The exporter reads the standard variables the SDK's OTLP/HTTP exporter reads (endpoint,
headers, timeout in seconds as that exporter does, compression, certificates) and the
batch processor's ``OTEL_BSP_*``; docs/observability.md lists them. Only ``http/protobuf``
is spoken. A full queue drops new spans (counted, warned once), as the SDK does; the
queue and batch sizes count records (a request's span with its render child is one).
"""

from __future__ import annotations

import gzip
import http.client
import os
import ssl
import struct
import sys
import threading
import time
import zlib
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from random import getrandbits
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from promptops.errors import UsageError

if TYPE_CHECKING:
    from promptops.serve.tracing import Record

Log = Callable[[str], None]
RETRYABLE = frozenset({408, 429, 502, 503, 504})


# ---- the wire format -----------------------------------------------------------------------
def _varint(n: int) -> bytes:
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


_SMALL = [_varint(i) for i in range(256)]


def _len(n: int) -> bytes:
    return _SMALL[n] if n < 256 else _varint(n)


def _field(tag: int, data: bytes) -> bytes:
    """A length-delimited field (wire type 2) numbered ``tag``."""
    return _varint(tag << 3 | 2) + _len(len(data)) + data


def _text(tag: int, value: str) -> bytes:
    return _field(tag, value.encode("utf-8", "replace"))


def key_value(key: str, value: str) -> bytes:
    """One ``KeyValue`` with a string ``AnyValue`` (every attribute here is a string)."""
    return _text(1, key) + _field(2, _text(1, value))


def resource(attributes: Mapping[str, str]) -> bytes:
    """The ``Resource`` message of every export."""
    return b"".join(_field(1, key_value(k, v)) for k, v in attributes.items())


def scope(name: str, version: str) -> bytes:
    """The ``InstrumentationScope`` message of every export."""
    return _text(1, name) + _text(2, version)


_TIMES = struct.Struct("<BQBQ").pack  # start_time_unix_nano (7), end (8): fixed64 each
INTERNAL = 1  # SpanKind of a child span (tracing.INTERNAL)
# A record's shape: id of its attribute tuple, name, kind, error?, a root?, the
# children's names (None: no such child); and its layout: the attribute tuple (kept so its
# id stays its own), the struct's pack and the constant pieces between ids and times.
_Shape = tuple[int, str, int, bool, bool, str | None, str | None]
_Layout = tuple[object, Callable[..., bytes], bytes, bytes, bytes, bytes, bytes, bytes, bytes,
                bytes, bytes, bytes, bytes, bytes]


class Encoder:
    """Records -> ``ExportTraceServiceRequest`` bytes, for one resource and scope."""

    def __init__(self, resource_bytes: bytes, scope_bytes: bytes) -> None:
        self._resource = _field(1, resource_bytes)
        self._scope = _field(1, scope_bytes)
        # by the attribute tuple's identity (the recorder reuses one tuple per series:
        # hashing eleven pairs per span cost more than the rest of its encoding), the
        # tuple kept in the value so that its id cannot be reused while cached
        self._attrs: dict[int, tuple[tuple[tuple[str, str], ...], bytes]] = {}
        self._heads: tuple[dict[str, bytes], ...] = tuple({} for _ in range(6))  # by kind
        self._shapes: dict[_Shape, _Layout] = {}  # record shapes (record), by _Shape

    def _attributes(self, attrs: tuple[tuple[str, str], ...]) -> bytes:
        hit = self._attrs.get(id(attrs))
        if hit is None or hit[0] is not attrs:
            if len(self._attrs) >= 4096:  # bounded labels: a full cache is a rare outlier
                self._attrs.clear()
            hit = self._attrs[id(attrs)] = (
                attrs, b"".join(_field(9, key_value(k, v)) for k, v in attrs))
        return hit[1]

    def _head(self, name: str, kind: int) -> bytes:
        """name (5) and kind (6) of a span."""
        heads = self._heads[kind]
        head = heads.get(name)
        if head is None:
            if len(heads) >= 4096:
                heads.clear()
            head = heads[name] = _text(5, name) + b"\x30" + _SMALL[kind]
        return head

    def record(self, r: Record) -> bytes:
        """The ``Span`` messages of one record (field numbers of opentelemetry-proto
        trace/v1): the span, then each child, whose parent it is."""
        return b"".join(self.records((r,)))

    def records(self, batch: Iterable[Record]) -> list[bytes]:
        """:meth:`record` of each of ``batch``, in one loop (the export thread's work).

        A record of the usual shape - no ``tracestate``, at most two children - is one
        ``struct`` call: the shape's layout (every tag, length, name and the attribute
        block, which never change for a series) is made once into a :class:`struct.Struct`
        and its constant pieces, so a record costs a dict lookup and one pack of its ids and
        times, not a dozen small concatenations per span (:meth:`spans` is the general
        form, which the tests hold this one to byte for byte)."""
        out: list[bytes] = []
        shapes, add = self._shapes, out.append
        fromhex = bytes.fromhex
        for r in batch:
            trace, parent, state, flags, remote, name, kind, start, end, attrs, error, kids = r
            n = len(kids)
            if state or n > 2:
                add(self.spans(r))
                continue
            kid1: str | None = None
            kid2: str | None = None
            start1 = end1 = start2 = end2 = 0
            if n == 2:
                (kid1, start1, end1), (kid2, start2, end2) = kids
            elif n:
                ((kid1, start1, end1),) = kids
            key = (id(attrs), name, kind, error, not parent, kid1, kid2)
            shape = shapes.get(key)
            if shape is None or shape[0] is not attrs:
                shape = self._shape(key, attrs)
            _, pack, c0, c1, c2, c3, c4, c5, k0, k1, k3, k4, j0, j3 = shape
            own = getrandbits(64) or 1
            f = 0x100 | (flags & 0xFF)  # SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK
            trace_bytes = fromhex(trace)
            parent_bytes = fromhex(parent) if parent else b""
            # a child's id is its parent's with a low bit pattern flipped (as in spans)
            if n == 2:
                add(pack(c0, trace_bytes, c1, own, c2, parent_bytes, c3, start, c4, end, c5,
                         f | 0x200 if remote else f,
                         k0, trace_bytes, c1, own ^ 1 or 0xFF, k1, own, k3, start1, c4,
                         end1, k4, f,
                         j0, trace_bytes, c1, own ^ 2 or 0xFF, k1, own, j3, start2, c4,
                         end2, k4, f))
            elif n:
                add(pack(c0, trace_bytes, c1, own, c2, parent_bytes, c3, start, c4, end, c5,
                         f | 0x200 if remote else f,
                         k0, trace_bytes, c1, own ^ 1 or 0xFF, k1, own, k3, start1, c4,
                         end1, k4, f))
            else:
                add(pack(c0, trace_bytes, c1, own, c2, parent_bytes, c3, start, c4, end, c5,
                         f | 0x200 if remote else f))
        return out

    def _shape(self, key: _Shape, attrs: tuple[tuple[str, str], ...]) -> _Layout:
        """The struct and constant pieces of one record shape (see :meth:`record`)."""
        _, name, kind, error, root, kid1, kid2 = key
        if len(self._shapes) >= 4096:  # bounded labels: a full cache is a rare outlier
            self._shapes.clear()
        c1, c2, c4, k1, k4 = b"\x12\x08", b"" if root else b"\x22\x08", b"\x41", \
            b"\x22\x08", b"\x85\x01"
        c3 = self._head(name, kind) + b"\x39"
        c5 = self._attributes(attrs) + (b"\x7a\x02\x18\x02" if error else b"") + k4
        # trace (2 + 16), id (2 + 8), parent?, name and kind, times (2 * 9), flags (2 + 4)
        size = 18 + 10 + len(c2) + (0 if root else 8) + len(c3) + 8 + 1 + 8 + len(c5) + 4
        c0 = b"\x12" + _len(size) + b"\x0a\x10"
        fmt = [f"<{len(c0)}s16s2sQ{len(c2)}s{0 if root else 8}s{len(c3)}sQ1sQ{len(c5)}sI"]
        kids: list[bytes] = []
        for kid in (kid1, kid2):
            if kid is None:
                kids += (b"", b"")
                continue
            head = self._head(kid, INTERNAL) + b"\x39"
            size = 18 + 10 + 10 + len(head) + 8 + 1 + 8 + 6
            opening = b"\x12" + _len(size) + b"\x0a\x10"
            kids += (opening, head)
            fmt.append(f"{len(opening)}s16s2sQ2sQ{len(head)}sQ1sQ2sI")
        (k0, k3), (j0, j3) = kids[:2], kids[2:]
        shape = self._shapes[key] = (attrs, struct.Struct("".join(fmt)).pack, c0, c1, c2, c3,
                                     c4, c5, k0, k1, k3, k4, j0, j3)
        return shape

    def spans(self, r: Record) -> bytes:
        """:meth:`record` for any record (a ``tracestate``, more children), piece by piece."""
        trace, parent, state, flags, remote, name, kind, start, end, attrs, error, kids = r
        trace_bytes = b"\x0a\x10" + bytes.fromhex(trace)
        own_id = getrandbits(64) or 1
        own = own_id.to_bytes(8, "little")
        state_bytes = _text(3, state) if state else b""
        flags = 0x100 | (flags & 0xFF)  # SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK
        body = b"".join((
            trace_bytes, b"\x12\x08", own, state_bytes,
            b"\x22\x08" + bytes.fromhex(parent) if parent else b"",
            self._head(name, kind), _TIMES(0x39, start, 0x41, end), self._attributes(attrs),
            b"\x7a\x02\x18\x02" if error else b"",  # status { code: STATUS_CODE_ERROR }
            b"\x85\x01", (flags | 0x200 if remote else flags).to_bytes(4, "little")))
        out = [b"\x12", _len(len(body)), body]
        if kids:
            tail = b"\x85\x01" + flags.to_bytes(4, "little")  # flags: field 16, fixed32
            under = b"\x22\x08" + own
            # a child's id is its parent's with a low bit pattern flipped: unique among the
            # children and unpredictable as the parent's is, without a draw per child
            for i, (child, child_start, child_end) in enumerate(kids, 1):
                body = b"".join((
                    trace_bytes, b"\x12\x08", ((own_id ^ i) or 0xFF).to_bytes(8, "little"),
                    state_bytes, under, self._head(child, INTERNAL),
                    _TIMES(0x39, child_start, 0x41, child_end), tail))
                out += (b"\x12", _len(len(body)), body)
        return b"".join(out)

    def request(self, records: Iterable[Record]) -> bytes:
        """The whole export request of ``records``: one resource, one scope. The spans are
        joined once, behind the few bytes that say their lengths (not copied once more
        per enclosing message)."""
        spans = self.records(records)
        scope_spans = len(self._scope) + sum(map(len, spans))
        resource_spans = len(self._resource) + 1 + len(_len(scope_spans)) + scope_spans
        spans[:0] = (b"\x0a", _len(resource_spans), self._resource, b"\x12",
                     _len(scope_spans), self._scope)
        return b"".join(spans)


# ---- configuration from the standard variables ----------------------------------------------
def _number(env: Mapping[str, str], name: str, default: float, log: Log) -> float:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if value < 0:
        log(f"warning: {name}={raw!r} is not a non-negative number; using {default:g}")
        return default
    return value


def _signal(env: Mapping[str, str], name: str) -> str:
    """``OTEL_EXPORTER_OTLP_TRACES_<name>``, else ``OTEL_EXPORTER_OTLP_<name>``."""
    return (env.get(f"OTEL_EXPORTER_OTLP_TRACES_{name}")
            or env.get(f"OTEL_EXPORTER_OTLP_{name}") or "").strip()


def pairs(raw: str, what: str, log: Log) -> dict[str, str]:
    """``k1=v1,k2=v2`` (W3C baggage-like, percent-decoded), as the OTEL_* lists are written."""
    out: dict[str, str] = {}
    for item in raw.split(","):
        if not item.strip():
            continue
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            log(f"warning: {what}: {item.strip()[:60]!r} is not key=value; ignored")
            continue
        out[unquote(key.strip())] = unquote(value.strip())
    return out


def endpoint(env: Mapping[str, str]) -> str:
    """The traces URL: the signal's own endpoint as given, else the base + ``/v1/traces``."""
    own = env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "").strip()
    if own:
        return own
    return env.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip().rstrip("/") + "/v1/traces"


class Exporter:
    """The export queue and its thread (started with the first span, and again after fork)."""

    def __init__(self, encoder: Encoder, env: Mapping[str, str] = os.environ, *,
                 log: Log | None = None) -> None:
        self.log: Log = log or (lambda message: print(message, file=sys.stderr, flush=True))
        self.encoder = encoder
        url = endpoint(env)
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise UsageError(f"OTEL_EXPORTER_OTLP_ENDPOINT / _TRACES_ENDPOINT: {url!r} is not "
                             "an http(s) URL (e.g. http://collector:4318)")
        self._https = parts.scheme == "https"
        self._host, self._port = parts.hostname, parts.port
        self._path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        self.url = url
        self.headers = {"Content-Type": "application/x-protobuf",
                        "User-Agent": "promptops-otlp"}
        self.headers.update(pairs(_signal(env, "HEADERS"), "OTEL_EXPORTER_OTLP_HEADERS",
                                  self.log))
        self.timeout = _number(env, "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", _number(
            env, "OTEL_EXPORTER_OTLP_TIMEOUT", 10.0, self.log), self.log) or 10.0
        self.compression = _signal(env, "COMPRESSION").lower()
        if self.compression not in ("", "none", "gzip", "deflate"):
            self.log(f"warning: OTLP compression {self.compression!r} is not gzip, deflate or "
                     "none; sending uncompressed")
            self.compression = ""
        protocol = _signal(env, "PROTOCOL").lower()
        if protocol not in ("", "http/protobuf"):
            self.log(f"warning: OTEL_EXPORTER_OTLP_PROTOCOL={protocol!r}: promptops exports "
                     "http/protobuf only")
        self._ssl: ssl.SSLContext | None = None
        if self._https:
            ca = _signal(env, "CERTIFICATE")
            self._ssl = ssl.create_default_context(cafile=ca or None)
            cert, key = _signal(env, "CLIENT_CERTIFICATE"), _signal(env, "CLIENT_KEY")
            if cert:
                self._ssl.load_cert_chain(cert, key or None)
        self.delay = _number(env, "OTEL_BSP_SCHEDULE_DELAY", 5000, self.log) / 1000
        self.max_queue = int(_number(env, "OTEL_BSP_MAX_QUEUE_SIZE", 2048, self.log)) or 2048
        self.batch = min(int(_number(env, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512, self.log))
                         or 512, self.max_queue)
        self.export_timeout = _number(env, "OTEL_BSP_EXPORT_TIMEOUT", 30000, self.log) / 1000
        self.queue: deque[Record] = deque()
        self.fast = 0  # below this many queued records, Tracing.record appends by itself
        self.dropped = 0
        self.exported = 0
        self._wake = threading.Event()
        self._stopping = False
        self._thread: threading.Thread | None = None
        self._conn: http.client.HTTPConnection | None = None
        self._failing = False
        os.register_at_fork(after_in_child=self._forked)

    # -- the request path -----------------------------------------------------------------
    def put(self, span: Record) -> None:
        """Queue one ended span (any thread; the deque's append is atomic). The request
        path appends itself while ``len(queue) < fast`` (:meth:`Tracing.record`) and calls
        this only when a batch is due, the queue is full or the thread is not running."""
        queue = self.queue
        if len(queue) >= self.max_queue:
            if not self.dropped:
                self.log(f"warning: the span queue is full ({self.max_queue}, "
                         "OTEL_BSP_MAX_QUEUE_SIZE): spans are dropped until it drains")
            self.dropped += 1
            return
        queue.append(span)
        if self._thread is None:
            self._start()
        if len(queue) >= self.batch and not self._wake.is_set():  # once per batch: set()
            self._wake.set()  # takes a lock, and until the thread runs each span comes here

    # -- the export thread ----------------------------------------------------------------
    def _start(self) -> None:
        if self._stopping:
            return
        thread = threading.Thread(target=self._run, name="promptops-otlp", daemon=True)
        self._thread = thread
        thread.start()
        self.fast = self.batch - 1  # from now on the request path appends by itself

    def _forked(self) -> None:
        """In a forked worker: no thread yet, no spans of the parent, no parent's socket."""
        self.fast = 0
        self.queue.clear()
        self._thread, self._conn, self._wake = None, None, threading.Event()

    def _run(self) -> None:
        while not self._stopping:
            full = self._wake.wait(self.delay)
            self._wake.clear()
            # woken by a full batch: export full batches only, as the SDK's batch processor
            # does (what is left waits for the next batch or the schedule delay); draining
            # all each time made a POST of the few spans queued while the last one was sent
            self._drain(time.monotonic() + self.export_timeout,
                        self.batch if full and not self._stopping else 1)

    def _drain(self, deadline: float, least: int = 1) -> None:
        """Export batches while at least ``least`` spans are queued (1: all of them)."""
        queue = self.queue
        while len(queue) >= least and queue and time.monotonic() < deadline:
            n = min(len(queue), self.batch)
            spans = [queue.popleft() for _ in range(n)]
            try:
                body = self.encoder.request(spans)
            except Exception as exc:  # our bug: say so, lose this batch, keep serving
                self.log(f"error: encoding {n} spans failed: {exc!r}")
                continue
            self._send(body, n, deadline)

    def _send(self, body: bytes, n: int, deadline: float) -> None:
        headers = self.headers
        if self.compression == "gzip":
            body, headers = gzip.compress(body), {**headers, "Content-Encoding": "gzip"}
        elif self.compression == "deflate":
            body, headers = zlib.compress(body), {**headers, "Content-Encoding": "deflate"}
        pause = 0.5
        while True:
            status, problem = self._post(body, headers)
            if status is not None and 200 <= status < 300:
                self.exported += n
                if self._failing:
                    self._failing = False
                    self.log(f"OTLP export to {self.url} works again")
                return
            if (status is None or status in RETRYABLE) and not self._stopping and \
                    time.monotonic() + pause < deadline:
                time.sleep(pause)
                pause *= 2
                continue
            if not self._failing:  # once per outage, not once per batch
                self._failing = True
                self.log(f"warning: OTLP export of {n} spans to {self.url} failed "
                         f"({problem}); spans are lost until the collector answers")
            return

    def _post(self, body: bytes, headers: Mapping[str, str]) -> tuple[int | None, str]:
        for attempt in (0, 1):  # a kept-alive connection the collector closed: once more
            conn = self._conn
            if conn is None:
                conn = self._conn = (
                    http.client.HTTPSConnection(self._host, self._port, timeout=self.timeout,
                                                context=self._ssl) if self._https else
                    http.client.HTTPConnection(self._host, self._port, timeout=self.timeout))
            try:
                conn.request("POST", self._path, body, dict(headers))
                reply = conn.getresponse()
                reply.read(1 << 20)
                if reply.will_close:
                    conn.close()
                    self._conn = None
                return reply.status, f"HTTP {reply.status}"
            except (OSError, http.client.HTTPException) as exc:
                conn.close()
                self._conn = None
                if attempt:
                    return None, str(exc) or type(exc).__name__
        return None, "unreachable"

    def shutdown(self) -> None:
        """Export what is queued (bounded by ``OTEL_BSP_EXPORT_TIMEOUT``), then stop."""
        self._stopping = True
        thread = self._thread
        self._wake.set()
        if thread is not None and thread is not threading.current_thread():
            thread.join(self.export_timeout)
            if thread.is_alive():  # stuck on the collector past the bound: leave the rest
                return
        self._drain(time.monotonic() + self.export_timeout)
        if self._conn is not None:
            self._conn.close()
            self._conn = None
