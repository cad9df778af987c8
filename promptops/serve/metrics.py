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

A request leaves only a tuple in :attr:`_Requests.observed` (the app appends it itself, no
call); the tuples are folded into the counters at scrape time, or when
:data:`FOLD_AT` of them wait, in C-level passes (a ``Counter`` groups the equal keys and
the equal (method, bucket) pairs) plus a Python step per *distinct* key. Observing was
~5,400 instructions of every request; the exported series are the same numbers in the
same order (issue 26; tests/serve/test_metrics_fold.py).
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter as Tally
from collections.abc import Iterator, Mapping, Sequence
from itertools import groupby, repeat
from operator import itemgetter
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
FOLD_AT = 4096  # observations kept before they are folded (a bound on their memory)
Observation = tuple[str, int, float]  # (method, status, seconds)
_KEY, _METHOD, _SECONDS = itemgetter(0, 1), itemgetter(0), itemgetter(2)


class _Requests:
    """Requests by (method, status) and latency by method: the scrape-time collector."""

    def __init__(self) -> None:
        self.counts: dict[tuple[str, int], int] = {}
        self.latency: dict[str, list[float]] = {}  # method -> bucket counts..., sum
        self.observed: list[Observation] = []  # not yet folded, in arrival order

    def observe(self, method: str, status: int, seconds: float) -> None:
        """One request answered (the app appends to :attr:`observed` itself)."""
        observed = self.observed
        observed.append((method, status, seconds))
        if len(observed) >= FOLD_AT:
            self.fold()

    def fold(self) -> None:
        """Add the waiting observations to the counters, as one :meth:`observe` each did:
        the same counts, buckets (``le`` is inclusive: ``bisect_left``) and sums (added in
        arrival order per method), new series in the order they first arrived."""
        observed = self.observed
        batch = observed[:]
        del observed[:len(batch)]
        if not batch:
            return
        counts = self.counts
        for key, n in Tally(map(_KEY, batch)).items():
            counts[key] = counts.get(key, 0) + n
        methods = list(map(_METHOD, batch))
        seconds = list(map(_SECONDS, batch))
        latency = self.latency
        for (method, bucket), n in Tally(zip(methods, map(bisect_left, repeat(BUCKETS),
                                                          seconds), strict=True)).items():
            row = latency.get(method)
            if row is None:
                row = latency[method] = [0.0] * (len(BUCKETS) + 2)
            row[bucket] += n
        if methods.count(methods[0]) == len(methods):  # the usual batch: one method
            row = latency[methods[0]]
            row[-1] = sum(seconds, row[-1])
            return
        for method, group in groupby(sorted(batch, key=_METHOD), _METHOD):  # stable
            row = latency[method]
            row[-1] = sum(map(_SECONDS, group), row[-1])

    def collect(self) -> Iterator[Metric]:
        self.fold()
        requests = CounterMetricFamily("promptops_http_requests", "MCP requests answered",
                                       labels=["method", "status"])
        for (method, status), n in self.counts.items():
            requests.add_metric([method, str(status)], n)
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
    fold_at = FOLD_AT

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
        # the hot path appends (method, status, seconds) here itself, then folds at fold_at
        self.observed = self._requests.observed
        self.fold = self._requests.fold

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
