"""OpenTelemetry spans of ``serve --http`` (issue 29), only when asked for.

With the ``[otel]`` extra installed and an OTLP endpoint in the standard variables
(``OTEL_EXPORTER_OTLP_ENDPOINT`` or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``; the SDK reads
the rest: headers, ``OTEL_SERVICE_NAME``, ``OTEL_RESOURCE_ATTRIBUTES``, sampling), each
request the server answers is a span, parented to the caller's W3C trace context: the
2026-07-28 ``_meta`` ``traceparent``/``tracestate`` first, else the HTTP ``traceparent``
header. ``prompts/get`` renders in a child span. Attributes name the method, package,
prompt, version, digest, revision and outcome, never argument values.

Off means off: :func:`wanted` reads two variables; nothing here is imported unless it
says yes (``serve --http`` imports this module only then; stdio never).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING

from promptops.serve.jsonrpc import Json

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.trace import Span

ENDPOINTS = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")


def wanted(env: Mapping[str, str] = os.environ) -> bool:
    """Whether the environment asks for traces (an OTLP endpoint, the SDK not disabled)."""
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    if env.get("OTEL_TRACES_EXPORTER", "otlp").strip().lower() == "none":
        return False
    return any(env.get(name) for name in ENDPOINTS)


class Tracing:
    """The tracer provider, its OTLP/HTTP exporter and the W3C propagator."""

    def __init__(self) -> None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
        from opentelemetry.trace import SpanKind, Status, StatusCode, set_span_in_context
        from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

        resource = Resource.create({"service.name": os.environ.get("OTEL_SERVICE_NAME")
                                    or "promptops"})
        self.provider = TracerProvider(resource=resource)
        self.provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        self.tracer = self.provider.get_tracer("promptops.serve")
        self._propagator = TraceContextTextMapPropagator()
        self._server = SpanKind.SERVER
        self._error = Status(StatusCode.ERROR)
        self._in = set_span_in_context

    def parent(self, params: Json, header: tuple[str | None, str | None]) -> Context | None:
        """The caller's context: ``_meta`` first (2026-07-28), else the HTTP headers."""
        meta = params.get("_meta")
        carrier: dict[str, str] = {}
        if isinstance(meta, dict) and isinstance(meta.get("traceparent"), str):
            carrier["traceparent"] = meta["traceparent"]
            if isinstance(meta.get("tracestate"), str):
                carrier["tracestate"] = meta["tracestate"]
        elif header[0]:
            carrier["traceparent"] = header[0]
            if header[1]:
                carrier["tracestate"] = header[1]
        return self._propagator.extract(carrier) if carrier else None

    @contextmanager
    def request(self, method: str, params: Json,
                header: tuple[str | None, str | None]) -> Iterator[Span]:
        """The request's span (not made current: nothing below reads the context, and
        attaching one costs more than the span's own bookkeeping)."""
        span = self.tracer.start_span(
            method, context=self.parent(params, header), kind=self._server,
            attributes={"rpc.system": "jsonrpc", "rpc.method": method},
            record_exception=False, set_status_on_exception=False)
        try:
            yield span
        finally:
            span.end()

    @contextmanager
    def child(self, parent: Span, name: str) -> Iterator[Span]:
        span = self.tracer.start_span(name, context=self._in(parent), record_exception=False,
                                      set_status_on_exception=False)
        try:
            yield span
        finally:
            span.end()

    @contextmanager
    def rebuild(self, commits: tuple[str, ...]) -> Iterator[Span]:
        """The git follower's rebuild of a new HEAD (a root span: no request caused it)."""
        span = self.tracer.start_span("promptops.rebuild", attributes={
            "promptops.commits": ",".join(commits)}, record_exception=False,
            set_status_on_exception=False)
        try:
            yield span
        except Exception:
            span.set_status(self._error)
            raise
        finally:
            span.end()

    def failed(self, span: Span, outcome: str) -> None:
        span.set_status(self._error)
        span.set_attribute("promptops.outcome", outcome)

    @staticmethod
    def trace_id(span: Span) -> str:
        return format(span.get_span_context().trace_id, "032x")

    def shutdown(self) -> None:
        """Export what is buffered (at shutdown)."""
        self.provider.shutdown()
