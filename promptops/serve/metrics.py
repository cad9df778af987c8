"""Prometheus metrics of ``promptops serve --http``, on a registry of the app's own.

A private :class:`prometheus_client.CollectorRegistry` per app (not the process-global
one) so that several apps in one process - tests, an embedding program - never collide
on registration. ``/metrics`` is per process: run one worker per container and scale by
replicas (each replica follows the repository itself), as docs/http.md explains; the
served commit and digest are labels of a gauge set to 1 (an Info metric would not survive
prometheus-client's multiprocess mode, should someone turn it on).

The two per-request series (requests by method and status, the latency histogram) are
plain counters of our own, read by a collector at scrape time: a labelled
prometheus-client ``Counter`` plus ``Histogram`` cost about 2.5 µs a request (a lock per
``labels()`` and per ``inc()``), a sixth of what the whole stateless request costs
beyond the bare uvicorn floor. They are only ever updated from the event loop's thread
(the one that also answers ``/metrics``), so no lock is needed; the exported series are
the same names, labels and buckets as before.

Each (method, status) series is a :class:`_Child` made at its first request, holding its
count and its method's latency row, so the app counts a request without a call: one dict
look-up by (method, status), the count, the bucket and the sum (what ``Metrics.observe``
did in a call, ~5,400 instructions a request; issue 26). The exported series are the same
numbers in the same order (tests/serve/test_metrics_fold.py).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.metrics_core import (
    CounterMetricFamily,
    HistogramMetricFamily,
    Metric,
)

BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0)
_LE = [repr(b) for b in BUCKETS] + ["+Inf"]  # prometheus-client's own spelling of bounds


class _Child:
    """One (method, status) series: its count, and its method's latency row (bucket
    counts..., sum), shared by every status of the method."""

    __slots__ = ("count", "row")

    def __init__(self, row: list[float]) -> None:
        self.count = 0
        self.row = row


class _Requests:
    """Requests by (method, status) and latency by method: the scrape-time collector."""

    def __init__(self) -> None:
        self.children: dict[tuple[str, int], _Child] = {}  # in the order they first came
        self.latency: dict[str, list[float]] = {}  # method -> bucket counts..., sum

    def child(self, method: str, status: int) -> _Child:
        """The series of (method, status), made at its first request."""
        row = self.latency.get(method)
        if row is None:
            row = self.latency[method] = [0.0] * (len(BUCKETS) + 2)
        made = self.children[(method, status)] = _Child(row)
        return made

    def observe(self, method: str, status: int, seconds: float) -> None:
        """One request answered (the app does the same inline, without this call)."""
        child = self.children.get((method, status))
        if child is None:
            child = self.child(method, status)
        child.count += 1
        row = child.row
        row[bisect_left(BUCKETS, seconds)] += 1  # le is inclusive: bisect_left
        row[-1] += seconds

    @property
    def counts(self) -> dict[tuple[str, int], int]:
        return {key: child.count for key, child in self.children.items()}

    def collect(self) -> Iterator[Metric]:
        requests = CounterMetricFamily("promptops_http_requests", "MCP requests answered",
                                       labels=["method", "status"])
        for (method, status), child in self.children.items():
            requests.add_metric([method, str(status)], child.count)
        yield requests
        latency = HistogramMetricFamily(
            "promptops_http_request_seconds",
            "time to answer one MCP request (streams: until opened)", labels=["method"])
        for method, row in self.latency.items():
            total, buckets = 0.0, []
            for le, count in zip(_LE, row[:-1], strict=True):
                total += count
                buckets.append((le, total))
            latency.add_metric([method], buckets, row[-1])
        yield latency


class Metrics:
    """The counters the HTTP transport and the follower update."""

    content_type = CONTENT_TYPE_LATEST

    def __init__(self) -> None:
        self.registry = r = CollectorRegistry(auto_describe=True)
        self._requests = _Requests()
        r.register(self._requests)
        self.streams = Gauge("promptops_http_open_streams", "open SSE streams", ["kind"],
                             registry=r)
        self.reloads = Counter("promptops_reloads", "new bundle sets served", registry=r)
        self.failed = Counter("promptops_failed_builds", "commits that did not build",
                              registry=r)
        self.bundle = Gauge("promptops_bundle_info", "the served bundles (value 1)",
                            ["package", "commit", "digest"], registry=r)
        self.observe = self._requests.observe  # (method, status, seconds)
        # the hot path (the app): children.get((method, status)) or child(method, status),
        # then its count, bucket (bisect_left of buckets: le is inclusive) and sum
        self.children, self.child = self._requests.children, self._requests.child
        self.buckets, self.first = BUCKETS, BUCKETS[0]

    def served(self, bundles: Sequence[Mapping[str, Any]]) -> None:
        self.bundle.clear()
        for b in bundles:
            pkg = b.get("package")
            src = b.get("source")
            name = pkg.get("name", "") if isinstance(pkg, dict) else ""
            commit = src.get("commit") or "" if isinstance(src, dict) else ""
            self.bundle.labels(str(name), str(commit), str(b.get("digest", ""))).set(1)

    def render(self) -> bytes:
        return generate_latest(self.registry)
