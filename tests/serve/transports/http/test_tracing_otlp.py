"""Our span records and OTLP encoding (promptops/serve/tracing.py, otlp.py), in process.

The request path records a minimal span and the export thread encodes it by hand, so the
bytes are checked here against the official OTLP message classes (opentelemetry-proto,
brought by the ``[otel]`` extra): every field the collector reads parses back as sent.
The W3C ``traceparent`` parse follows the specification's rules, the sampler the SDK's
built-in samplers, and the exporter is driven against a real HTTP server (headers, gzip,
batching, flush at shutdown); the collector process itself is in test_usage_tracing.py.
"""

from __future__ import annotations

import gzip
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from promptops.errors import UsageError
from promptops.serve.otlp import Encoder, Exporter, resource, scope
from promptops.serve.tracing import (
    INTERNAL,
    SERVER,
    Record,
    Sampler,
    Tracing,
    checked_tracestate,
    parse_traceparent,
    resource_attributes,
)

TRACE, PARENT = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"


def _decode(body: bytes) -> ExportTraceServiceRequest:
    return ExportTraceServiceRequest.FromString(body)


def test_encoded_spans_parse_back_with_the_official_messages() -> None:
    enc = Encoder(resource({"service.name": "prompts", "deployment.environment": "ünï"}),
                  scope("promptops.serve", "0.1.0"))
    attrs = (("rpc.system", "jsonrpc"), ("rpc.method", "prompts/get"),
             ("promptops.prompt", "code_review"), ("promptops.outcome", "render_error"))
    record: Record = (TRACE, PARENT, "vendor=a,other=b", 1, True, "prompts/get", SERVER,
                      1000, 2234, attrs, True, (("render", 1100, 1105),))
    root: Record = (TRACE, "", "", 1, False, "promptops.rebuild", INTERNAL, 5, 9,
                    (("promptops.commits", "abc"),), False, ())
    req = _decode(enc.request([record, root] * 200))  # a batch past the 1-byte lengths

    (rs,) = req.resource_spans
    res = {kv.key: kv.value.string_value for kv in rs.resource.attributes}
    assert res == {"service.name": "prompts", "deployment.environment": "ünï"}
    (ss,) = rs.scope_spans
    assert (ss.scope.name, ss.scope.version) == ("promptops.serve", "0.1.0")
    assert len(ss.spans) == 600
    first, child, rebuild = ss.spans[0], ss.spans[1], ss.spans[2]
    assert first.trace_id.hex() == TRACE and len(first.span_id) == 8
    assert first.parent_span_id.hex() == PARENT and first.trace_state == "vendor=a,other=b"
    assert first.name == "prompts/get" and first.kind == 2  # SPAN_KIND_SERVER
    assert (first.start_time_unix_nano, first.end_time_unix_nano) == (1000, 2234)
    assert {kv.key: kv.value.string_value for kv in first.attributes} == dict(attrs)
    assert first.status.code == 2  # STATUS_CODE_ERROR
    assert first.flags == 0x301  # sampled, has-is-remote, is-remote
    assert child.trace_id.hex() == TRACE and child.parent_span_id == first.span_id
    assert child.trace_state == "vendor=a,other=b"
    assert child.name == "render" and child.kind == 1 and child.status.code == 0
    assert (child.start_time_unix_nano, child.end_time_unix_nano) == (1100, 1105)
    assert child.flags == 0x101 and not child.attributes
    assert rebuild.parent_span_id == b"" and rebuild.flags == 0x101
    assert rebuild.attributes[0].value.string_value == "abc"
    assert len({s.span_id for s in ss.spans}) == 600  # fresh span ids


def test_the_one_pack_encoding_is_the_general_encoding_byte_for_byte() -> None:
    """A record of the usual shape (no tracestate, at most two children) is packed in one
    struct call from its shape's layout; every such shape, encoded both ways from the same
    random state, is the same bytes, and a batch of them parses back with the children
    parented to their request's span."""
    import random

    enc = Encoder(resource({"service.name": "prompts"}), scope("promptops.serve", "0.1.0"))
    attrs = (("rpc.system", "jsonrpc"), ("promptops.prompt", "p" * 300))  # 2-byte lengths
    kids_of = ((), (("render", 1100, 1105),),
               (("render", 1100, 1190), ("arguments", 1101, 1130)))
    records: list[Record] = [
        (TRACE, parent, "", flags, remote, name, kind, 1000, 1 << 62, attrs, error, kids)
        for parent in ("", PARENT) for remote in (False, True) for error in (False, True)
        for kids in kids_of for flags in (1, 3) for name, kind in (
            ("prompts/get", SERVER), ("promptops.rebuild", INTERNAL))]
    for r in records:
        random.seed(7)
        packed = enc.record(r)
        random.seed(7)
        assert packed == enc.spans(r), r
    random.seed(7)
    batch = enc.request(records)
    random.seed(7)
    assert batch == enc.request([r for r in records]) and len(batch) > 0x4000
    spans = _decode(batch).resource_spans[0].scope_spans[0].spans
    assert len(spans) == sum(1 + len(r[11]) for r in records)
    i = 0
    for r in records:
        own = spans[i]
        assert (own.name, own.parent_span_id.hex(), own.status.code) == (
            r[5], r[1], 2 if r[10] else 0)
        assert own.flags == 0x100 | r[3] | (0x200 if r[4] else 0)
        for k, (name, start, end) in enumerate(r[11], 1):
            kid = spans[i + k]
            assert (kid.name, kid.start_time_unix_nano, kid.end_time_unix_nano) == (
                name, start, end)
            assert kid.parent_span_id == own.span_id and kid.trace_id.hex() == TRACE
            assert kid.span_id != own.span_id and kid.flags == 0x100 | r[3]
        i += 1 + len(r[11])
    assert len({s.span_id for s in spans}) == len(spans)


@pytest.mark.parametrize(("header", "parsed"), [
    (f"00-{TRACE}-{PARENT}-01", (TRACE, PARENT, 1)),
    (f"00-{TRACE}-{PARENT}-00", (TRACE, PARENT, 0)),
    (f"  00-{TRACE}-{PARENT}-01 ", (TRACE, PARENT, 1)),
    (f"cc-{TRACE}-{PARENT}-01-what-the-future-adds", (TRACE, PARENT, 1)),  # a later version
    (f"00-{TRACE}-{PARENT}-01-extra", None),  # version 00 is exact
    (f"ff-{TRACE}-{PARENT}-01", None),  # the forbidden version
    (f"00-{'0' * 32}-{PARENT}-01", None), (f"00-{TRACE}-{'0' * 16}-01", None),
    (f"00-{TRACE.upper()}-{PARENT}-01", None), (f"00-{TRACE}-{PARENT}", None),
    ("", None), (17, None), ("00-" + "a" * 600, None),
])
def test_traceparent_is_parsed_as_w3c_says(header: object,
                                           parsed: tuple[str, str, int] | None) -> None:
    assert parse_traceparent(header) == parsed


def test_a_malformed_tracestate_is_dropped() -> None:
    assert checked_tracestate("rojo=00f067aa0ba902b7, congo=t61rcWkgMzE") == \
        "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"
    assert checked_tracestate("no equals sign") == ""
    assert checked_tracestate(",".join(f"k{i}=v" for i in range(33))) == ""  # > 32 members
    assert checked_tracestate("k=" + "v" * 600) == ""


def _roots(sampler: Sampler, n: int = 2000) -> float:
    import random

    rng = random.Random(7)
    return sum(sampler.root(format(rng.getrandbits(128), "032x")) for _ in range(n)) / n


def test_the_sampler_variables_are_honoured() -> None:
    said: list[str] = []
    assert _roots(Sampler({})) == 1.0  # parentbased_always_on
    assert _roots(Sampler({"OTEL_TRACES_SAMPLER": "always_off"})) == 0.0
    assert 0.2 < _roots(Sampler({"OTEL_TRACES_SAMPLER": "traceidratio",
                                 "OTEL_TRACES_SAMPLER_ARG": "0.25"})) < 0.3
    # the SDK's rule: sampled when the trace id's low 64 bits are under ratio * 2**64
    half = Sampler({"OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.5"})
    assert half.root("f" * 16 + "7" + "f" * 15) == 1 and half.root("0" * 16 + "8" + "0" * 15) == 0
    odd = Sampler({"OTEL_TRACES_SAMPLER": "jaeger_remote"}, said.append)
    assert odd.name == "parentbased_always_on" and "jaeger_remote" in said[0]
    bad = Sampler({"OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "2"},
                  said.append)
    assert bad.bound == 1 << 64 and "OTEL_TRACES_SAMPLER_ARG" in said[1]


def test_the_resource_takes_the_service_name_in_the_specifications_order() -> None:
    attrs = resource_attributes({"OTEL_RESOURCE_ATTRIBUTES": "service.name=a,team=b%20c"})
    assert attrs["service.name"] == "a" and attrs["team"] == "b c"
    assert resource_attributes({"OTEL_RESOURCE_ATTRIBUTES": "service.name=a",
                                "OTEL_SERVICE_NAME": "z"})["service.name"] == "z"
    assert resource_attributes({})["service.name"] == "promptops"


class _Collector:
    """A real HTTP server on loopback keeping each POST (path, headers, body)."""

    def __init__(self) -> None:
        posts = self.posts = []  # type: list[tuple[str, dict[str, str], bytes]]

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["content-length"]))
                posts.append((self.path, dict(self.headers.items()), body))
                self.send_response(200)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture()
def collector() -> Iterator[_Collector]:
    c = _Collector()
    yield c
    c.server.shutdown()
    c.server.server_close()


def test_tracing_exports_batches_with_the_configured_headers_and_gzip(
        collector: _Collector) -> None:
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{collector.port}/base/",
           "OTEL_EXPORTER_OTLP_HEADERS": "x-team=prompts,authorization=Bearer%20t0k",
           "OTEL_EXPORTER_OTLP_COMPRESSION": "gzip", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "40",
           "OTEL_BSP_SCHEDULE_DELAY": "60000", "OTEL_SERVICE_NAME": "team-prompts"}
    tracing = Tracing(env)
    for _ in range(100):
        context = tracing.context({"_meta": {"traceparent": f"00-{TRACE}-{PARENT}-01"}},
                                  (None, None))
        tracing.record(context, "prompts/get", SERVER, 1, [(), False, (("render", 2, 3),)])
    unsampled = tracing.context({}, (f"00-{TRACE}-{PARENT}-00", None))
    assert unsampled[3] == 0  # the caller did not sample: parentbased_always_on follows it
    assert tracing.context({}, (None, None))[3] == 1  # a root: always_on
    tracing.shutdown()  # flushes what the batch size did not send
    spans = []
    for path, headers, body in collector.posts:
        assert path == "/base/v1/traces"
        assert headers["x-team"] == "prompts" and headers["authorization"] == "Bearer t0k"
        assert headers["Content-Encoding"] == "gzip"
        assert headers["Content-Type"] == "application/x-protobuf"
        req = _decode(gzip.decompress(body))
        attrs = {kv.key: kv.value.string_value
                 for kv in req.resource_spans[0].resource.attributes}
        assert attrs["service.name"] == "team-prompts"
        spans += req.resource_spans[0].scope_spans[0].spans
    assert len(collector.posts) >= 3  # batches of at most 40 records (a span and its child)
    assert len(spans) == 200 and {s.trace_id.hex() for s in spans} == {TRACE}
    ids = {s.span_id.hex(): s for s in spans}
    for s in spans:
        if s.name == "render":
            assert ids[s.parent_span_id.hex()].name == "prompts/get"
        else:
            assert s.parent_span_id.hex() == PARENT


def test_a_full_batch_wakes_the_export_of_full_batches_only(collector: _Collector) -> None:
    """Woken by a full batch, the thread sends full batches and leaves the rest for the
    schedule delay (or shutdown), as the SDK's batch processor does: sending everything
    queued made a POST of the few spans queued while the previous POST was on the wire,
    which cost more than encoding them."""
    import time

    tracing = Tracing({"OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{collector.port}",
                       "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "40",
                       "OTEL_BSP_SCHEDULE_DELAY": "60000"})
    for _ in range(100):
        tracing.record(tracing.context({}, (None, None)), "prompts/get", SERVER, 1,
                       [(), False, ()])
    deadline = time.monotonic() + 20
    while len(collector.posts) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.5)  # a partial batch sent now would be a third POST
    sizes = [len(_decode(body).resource_spans[0].scope_spans[0].spans)
             for _, _, body in collector.posts]
    assert sizes == [40, 40]
    tracing.shutdown()  # the 20 left are flushed at shutdown, none lost
    assert [len(_decode(body).resource_spans[0].scope_spans[0].spans)
            for _, _, body in collector.posts] == [40, 40, 20]


def test_an_unreachable_collector_costs_a_warning_not_the_request() -> None:
    said: list[str] = []
    tracing = Tracing({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:9/v1/traces",
                       "OTEL_BSP_EXPORT_TIMEOUT": "2000"}, log=said.append)
    tracing.record(tracing.context({}, (None, None)), "initialize", SERVER, 1, [(), False, ()])
    tracing.shutdown()
    assert len(said) == 1 and "http://127.0.0.1:9/v1/traces" in said[0]


def test_a_bad_endpoint_is_refused_at_start() -> None:
    with pytest.raises(UsageError, match="not an http"):
        Exporter(Encoder(b"", b""), {"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318"})
