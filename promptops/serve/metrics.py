"""Prometheus metrics of ``promptops serve --http``, on a registry of the app's own.

A private :class:`prometheus_client.CollectorRegistry` per app (not the process-global
one) so that several apps in one process - tests, an embedding program - never collide
on registration. ``/metrics`` is per process: run one worker per container and scale by
replicas (each replica follows the repository itself), as docs/http.md explains; the
served commit and digest are labels of a gauge set to 1 (an Info metric would not survive
prometheus-client's multiprocess mode, should someone turn it on).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0)


class Metrics:
    """The counters the HTTP transport and the follower update."""

    content_type = CONTENT_TYPE_LATEST

    def __init__(self) -> None:
        self.registry = r = CollectorRegistry(auto_describe=True)
        self.requests = Counter("promptops_http_requests", "MCP requests answered",
                                ["method", "status"], registry=r)
        self.latency = Histogram("promptops_http_request_seconds",
                                 "time to answer one MCP request (streams: until opened)",
                                 ["method"], buckets=BUCKETS, registry=r)
        self.streams = Gauge("promptops_http_open_streams", "open SSE streams", ["kind"],
                             registry=r)
        self.reloads = Counter("promptops_reloads", "new bundle sets served", registry=r)
        self.failed = Counter("promptops_failed_builds", "commits that did not build",
                              registry=r)
        self.bundle = Gauge("promptops_bundle_info", "the served bundles (value 1)",
                            ["package", "commit", "digest"], registry=r)

    def observe(self, method: str, status: int, seconds: float) -> None:
        self.requests.labels(method, str(status)).inc()
        self.latency.labels(method).observe(seconds)

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
