"""The per-series children give the series the per-request counters gave (issue 26).

``Metrics`` counts a request in the (method, status) child made at its first request,
which holds its count and its method's latency row; the app does what ``observe`` does
inline. The reference here is the counter-per-key update it replaced. Both see the same
generated observations - bucket bounds exactly, several methods and statuses interleaved -
and must export the same counts, buckets and sums, in the same series order.
"""

from __future__ import annotations

import random
from bisect import bisect_left

from prometheus_client.parser import text_string_to_metric_families

from promptops.serve.metrics import BUCKETS, Metrics


class _PerKey:
    """The update each request made before the children (metrics.py before issue 26)."""

    def __init__(self) -> None:
        self.counts: dict[tuple[str, int], int] = {}
        self.latency: dict[str, list[float]] = {}

    def observe(self, method: str, status: int, seconds: float) -> None:
        key = (method, status)
        self.counts[key] = self.counts.get(key, 0) + 1
        row = self.latency.get(method)
        if row is None:
            row = self.latency[method] = [0.0] * (len(BUCKETS) + 2)
        row[bisect_left(BUCKETS, seconds)] += 1
        row[-1] += seconds


def _series(metrics: Metrics) -> list[tuple[str, dict[str, str], float]]:
    return [(s.name, s.labels, s.value)
            for family in text_string_to_metric_families(metrics.render().decode())
            for s in family.samples if s.name.startswith("promptops_http_request")]


def test_the_children_export_what_the_per_key_counters_did() -> None:
    rng = random.Random(26)
    methods = ["prompts/get", "initialize", "other", "prompts/list", "tools/call"]
    reference, metrics = _PerKey(), Metrics()
    for _ in range(5000):
        pick = rng.random()
        seconds = rng.choice(BUCKETS) if pick < 0.3 else 20.0 if pick < 0.35 else \
            rng.random() * 0.02
        method, status = rng.choice(methods), rng.choice((200, 200, 202, 400, 404))
        reference.observe(method, status, seconds)
        metrics.observe(method, status, seconds)
    requests = metrics._requests
    assert list(requests.counts.items()) == list(reference.counts.items())  # and order
    assert list(requests.latency.items()) == list(reference.latency.items())
    exported = _series(metrics)
    counted = [(labels["method"], int(labels["status"]), value) for name, labels, value
               in exported if name == "promptops_http_requests_total"]
    assert counted == [(m, s, n) for (m, s), n in reference.counts.items()]
    counts = {labels["method"]: value for name, labels, value in exported
              if name == "promptops_http_request_seconds_count"}
    assert counts == {m: sum(row[:-1]) for m, row in reference.latency.items()}


def test_a_method_s_statuses_share_its_latency_row() -> None:
    metrics = Metrics()
    metrics.observe("prompts/get", 200, 0.0007)
    metrics.observe("prompts/get", 404, 0.001)  # on the bound: le is inclusive
    samples = {(name, tuple(sorted(labels.items()))): value
               for name, labels, value in _series(metrics)}
    get = ("method", "prompts/get")
    assert samples[("promptops_http_requests_total", (get, ("status", "200")))] == 1
    assert samples[("promptops_http_requests_total", (get, ("status", "404")))] == 1
    assert samples[("promptops_http_request_seconds_bucket", (("le", "0.001"), get))] == 2
    assert samples[("promptops_http_request_seconds_bucket", (("le", "0.0005"), get))] == 0
    assert samples[("promptops_http_request_seconds_count", (get,))] == 2
