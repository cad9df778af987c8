"""OpenTelemetry spans of ``serve --http`` (issue 29), only when asked for.

With the ``[otel]`` extra installed and an OTLP endpoint in the standard variables
(``OTEL_EXPORTER_OTLP_ENDPOINT`` or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``, plus the
exporter's headers, timeout, compression and certificates, ``OTEL_SERVICE_NAME``,
``OTEL_RESOURCE_ATTRIBUTES``, ``OTEL_TRACES_SAMPLER``/``_ARG`` and ``OTEL_BSP_*``), each
request the server answers is a span, parented to the caller's W3C trace context: the
2026-07-28 ``_meta`` ``traceparent``/``tracestate`` first, else the HTTP ``traceparent``
header. ``prompts/get`` (and a ``tools/call`` that renders a prompt) renders in a child
span. Attributes name the method, package, prompt, version, digest, revision, channel and
outcome, never argument values.

Why not the OpenTelemetry SDK's tracer: its span start/end, attribute validation and
context machinery cost about five times a cached ``prompts/get``. Here the request path
makes only a :data:`Record` - a tuple: the trace context, name, kind, two ``time_ns``
stamps, a cached tuple of attribute pairs, the children's names and stamps - with our own
W3C ``traceparent`` parse, trace id (``random.getrandbits``, as the SDK's generator) and
sampler (the SDK's rules: ``parentbased_*``, ``traceidratio`` over the trace id's low 64
bits); everything else - span ids, encoding to OTLP protobuf, batching, HTTP - happens on
:mod:`promptops.serve.otlp`'s thread.

Off means off: :func:`wanted` reads a few variables; nothing here is imported unless it
says yes (``serve --http`` imports this module only then; stdio never).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from importlib.util import find_spec
from random import getrandbits
from time import time_ns
from typing import cast

from promptops.serve.jsonrpc import Json

ENDPOINTS = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
INTERNAL, SERVER = 1, 2  # OTLP SpanKind
SAMPLERS = ("always_on", "always_off", "traceidratio", "parentbased_always_on",
            "parentbased_always_off", "parentbased_traceidratio")
_TRACEPARENT = re.compile(r"([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?")
_TRACESTATE = re.compile(r"[ \t]*[a-z0-9_\-*/@]{1,256}=[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,256}"
                         r"(?:[ \t]*,[ \t]*[a-z0-9_\-*/@]{1,256}=[\x20-\x2b\x2d-\x3c\x3e-\x7e]"
                         r"{0,256}){0,31}[ \t]*")
_ZERO_TRACE, _ZERO_SPAN = "0" * 32, "0" * 16


def wanted(env: Mapping[str, str] = os.environ) -> bool:
    """Whether the environment asks for traces (an OTLP endpoint, the SDK not disabled)."""
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    if env.get("OTEL_TRACES_EXPORTER", "otlp").strip().lower() == "none":
        return False
    return any(env.get(name) for name in ENDPOINTS)


# The caller's context of one request: (trace id as 32 hex digits, parent span id as 16 hex
# digits or "", tracestate or "", W3C flags (1 = sampled), whether the parent is remote).
Context = tuple[str, str, str, int, bool]
Attrs = tuple[tuple[str, str], ...]
Children = tuple[tuple[str, int, int], ...]
# What the request's code fills in while it runs: [attributes, error?, children], where a
# child is (name, start ns, end ns) - an INTERNAL span under the request's span.
Notes = list[object]
# One ended span and its children, as queued for export: Context + (name, kind, start ns,
# end ns, attributes, error?, children). Span ids are drawn at export (nothing on the
# request path reads them: the access log prints the trace id).
Record = tuple[str, str, str, int, bool, str, int, int, int, Attrs, bool, Children]


def parse_traceparent(value: object) -> tuple[str, str, int] | None:
    """(trace id, parent span id, flags) of a W3C ``traceparent``, or None if malformed
    (the SDK's propagator's rules: version ff and all-zero ids refused, version 00 exact)."""
    if not isinstance(value, str) or len(value) > 512:
        return None
    m = _TRACEPARENT.fullmatch(value.strip())
    if m is None:
        return None
    version, trace, span, flags, rest = m.groups()
    if version == "ff" or (version == "00" and rest) or trace == _ZERO_TRACE or \
            span == _ZERO_SPAN:
        return None
    return trace, span, int(flags, 16)


def checked_tracestate(value: object) -> str:
    """``value`` if it is a well-formed W3C ``tracestate`` (at most 32 members, 512 bytes),
    else "" (a malformed one is dropped, as the SDK does)."""
    if not isinstance(value, str) or len(value) > 512 or not _TRACESTATE.fullmatch(value):
        return ""
    return ",".join(member.strip() for member in value.split(","))


class Sampler:
    """``OTEL_TRACES_SAMPLER`` and ``_ARG``, decided as the SDK's built-in samplers do."""

    def __init__(self, env: Mapping[str, str], log: object = None) -> None:
        name = env.get("OTEL_TRACES_SAMPLER", "").strip().lower() or "parentbased_always_on"
        if name not in SAMPLERS:
            _say(log, f"warning: OTEL_TRACES_SAMPLER={name!r} is not one of "
                      f"{', '.join(SAMPLERS)}; using parentbased_always_on")
            name = "parentbased_always_on"
        self.name = name
        self.parent_based = name.startswith("parentbased_")
        root = name.removeprefix("parentbased_")
        ratio = 1.0
        if root == "traceidratio":
            raw = env.get("OTEL_TRACES_SAMPLER_ARG", "").strip()
            try:
                ratio = float(raw) if raw else 1.0
            except ValueError:
                ratio = -1.0
            if not 0.0 <= ratio <= 1.0:
                _say(log, f"warning: OTEL_TRACES_SAMPLER_ARG={raw!r} is not a ratio in "
                          "[0, 1]; using 1.0")
                ratio = 1.0
        elif root == "always_off":
            ratio = 0.0
        self.bound = round(ratio * (1 << 64))  # sampled when trace id's low 64 bits < bound

    def root(self, trace: str) -> int:
        """The flags of a root span of ``trace``."""
        bound = self.bound
        if bound >= 1 << 64:
            return 1
        return 1 if bound and int(trace[16:], 16) < bound else 0


def _say(log: object, message: str) -> None:
    if callable(log):
        log(message)
    else:
        print(message, file=sys.stderr, flush=True)


def resource_attributes(env: Mapping[str, str], log: object = None) -> dict[str, str]:
    """``OTEL_RESOURCE_ATTRIBUTES``, ``service.name`` from ``OTEL_SERVICE_NAME`` first (as
    the specification orders them), else ``promptops``; and what produced the spans."""
    from promptops import __version__
    from promptops.serve.otlp import pairs

    attrs = {"telemetry.sdk.language": "python", "telemetry.sdk.name": "promptops",
             "telemetry.sdk.version": __version__}
    attrs.update(pairs(env.get("OTEL_RESOURCE_ATTRIBUTES", ""), "OTEL_RESOURCE_ATTRIBUTES",
                       lambda m: _say(log, m)))
    attrs["service.name"] = (env.get("OTEL_SERVICE_NAME", "").strip()
                             or attrs.get("service.name") or "promptops")
    return attrs


class Tracing:
    """The span recorder of one process: sampler, W3C parse, the export queue."""

    def __init__(self, env: Mapping[str, str] = os.environ, *, log: object = None) -> None:
        if find_spec("opentelemetry.sdk") is None:  # the [otel] extra is the opt-in
            raise ImportError("No module named 'opentelemetry.sdk'")
        from promptops import __version__
        from promptops.serve.otlp import Encoder, Exporter, resource, scope

        self.sampler = Sampler(env, log)
        encoder = Encoder(resource(resource_attributes(env, log)),
                          scope("promptops.serve", __version__))
        self.exporter = Exporter(encoder, env,
                                 log=(lambda m: _say(log, m)) if log is not None else None)
        self._always = self.sampler.bound >= 1 << 64  # every root span sampled
        self._rpc: dict[str, Attrs] = {}

    # ---- the request path -------------------------------------------------------------------
    def context(self, params: Json, header: tuple[str | None, str | None]) -> Context:
        """The request's trace context: the caller's from ``_meta`` first (2026-07-28), else
        from the HTTP headers; a new trace (a root span) without either, sampled by the
        ``OTEL_TRACES_SAMPLER`` rules."""
        meta = params.get("_meta")
        parent = state = None
        if isinstance(meta, dict) and isinstance(meta.get("traceparent"), str):
            parent, state = meta["traceparent"], meta.get("tracestate")
        elif header[0]:
            parent, state = header
        found = parse_traceparent(parent) if parent is not None else None
        if found is None:
            trace = "%032x" % (getrandbits(128) or 1)
            return trace, "", "", 1 if self._always else self.sampler.root(trace), False
        trace, span, flags = found
        flags = flags & 1 if self.sampler.parent_based else self.sampler.root(trace)
        return trace, span, checked_tracestate(state) if state else "", flags, True

    def attributes(self, method: str) -> Attrs:
        """The request span's first attributes (one tuple per method, made once)."""
        found = self._rpc.get(method)
        if found is None:
            found = self._rpc[method] = (("rpc.system", "jsonrpc"), ("rpc.method", method))
        return found

    def record(self, context: Context, name: str, kind: int, start: int,
               notes: Notes) -> None:
        """The span of ``context`` started at ``start`` ends now: queue it for export (a
        sampled one; the caller checks ``context[3] & 1`` before it takes notes)."""
        trace, parent, state, flags, remote = context
        attrs, error, kids = notes  # unpacked: one tuple made, not a list and a tuple
        ended = cast(Record, (trace, parent, state, flags, remote, name, kind, start,
                              time_ns(), attrs, error, kids))
        exporter = self.exporter
        queue = exporter.queue
        if len(queue) < exporter.fast:  # the usual case: no batch due, thread running
            queue.append(ended)
        else:
            exporter.put(ended)

    # ---- the follower -----------------------------------------------------------------------
    @contextmanager
    def rebuild(self, commits: tuple[str, ...]) -> Iterator[Notes]:
        """The git follower's rebuild of a new HEAD (a root span: no request caused it)."""
        trace = "%032x" % (getrandbits(128) or 1)
        context: Context = (trace, "", "", self.sampler.root(trace), False)
        notes: Notes = [(("promptops.commits", ",".join(commits)),), False, ()]
        start = time_ns()
        try:
            yield notes
        except Exception:
            notes[1] = True
            raise
        finally:
            if context[3] & 1:
                self.record(context, "promptops.rebuild", INTERNAL, start, notes)

    def shutdown(self) -> None:
        """Export what is buffered (at shutdown)."""
        self.exporter.shutdown()
