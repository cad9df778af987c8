"""Folding the waiting observations gives the series counting each request gave (issue 26).

``Metrics`` keeps each request's (method, status, seconds) and folds them into its counters
at scrape time or every ``FOLD_AT``; the reference here is the per-request update it
replaced. Both see the same generated observations - bucket bounds exactly, several
methods interleaved, batches of one method, folds at every size - and must export the same
counts, buckets and series order, and sums equal to the float (the fold adds each method's
seconds in arrival order, as the per-request update did).
"""

from __future__ import annotations

import math
import random
from bisect import bisect_left

from prometheus_client.parser import text_string_to_metric_families

from promptops.serve.metrics import BUCKETS, FOLD_AT, Metrics


class _PerRequest:
    """The update each request made before the fold (metrics.py before issue 26)."""

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


def _observations(rng: random.Random, n: int, methods: list[str]) -> list[tuple[str, int, float]]:
    out = []
    for _ in range(n):
        pick = rng.random()
        seconds = rng.choice(BUCKETS) if pick < 0.3 else 20.0 if pick < 0.35 else \
            rng.random() * 0.02
        out.append((rng.choice(methods), rng.choice((200, 200, 202, 400, 404)), seconds))
    return out


def _series(metrics: Metrics) -> list[tuple[str, dict[str, str], float]]:
    return [(s.name, s.labels, s.value)
            for family in text_string_to_metric_families(metrics.render().decode())
            for s in family.samples if s.name.startswith("promptops_http_request")]


def test_folded_series_equal_the_per_request_update() -> None:
    rng = random.Random(26)
    one = ["prompts/get"]
    several = ["prompts/get", "initialize", "other", "prompts/list", "tools/call"]
    for methods, n in ((one, 3 * FOLD_AT + 17), (several, 2 * FOLD_AT + 5), (several, 3)):
        observations = _observations(rng, n, methods)
        reference, metrics = _PerRequest(), Metrics()
        scrapes: list[list[tuple[str, dict[str, str], float]]] = []
        for i, (method, status, seconds) in enumerate(observations):
            reference.observe(method, status, seconds)
            if i % 2:  # both ways in: the app's own append, and observe()
                metrics.observed.append((method, status, seconds))
                if len(metrics.observed) >= metrics.fold_at:
                    metrics.fold()
            else:
                metrics.observe(method, status, seconds)
            if i in (0, 1, 7, FOLD_AT + 3):  # a scrape folds whatever waits
                scrapes.append(_series(metrics))
        assert len(metrics.observed) < FOLD_AT  # never more than FOLD_AT wait
        assert scrapes  # scraped mid-way, then at the end
        requests = metrics._requests
        requests.fold()
        assert requests.counts == reference.counts
        assert list(requests.counts) == list(reference.counts)  # series order
        assert list(requests.latency) == list(reference.latency)
        for method, row in reference.latency.items():
            folded = requests.latency[method]
            assert folded[:-1] == row[:-1]
            assert math.isclose(folded[-1], row[-1], rel_tol=1e-12)


def test_a_scrape_counts_the_request_just_answered() -> None:
    metrics = Metrics()
    metrics.observed.append(("prompts/get", 200, 0.0007))
    samples = {(name, tuple(sorted(labels.items()))): value
               for name, labels, value in _series(metrics)}
    assert samples[("promptops_http_requests_total",
                    (("method", "prompts/get"), ("status", "200")))] == 1
    assert samples[("promptops_http_request_seconds_bucket",
                    (("le", "0.001"), ("method", "prompts/get")))] == 1
    assert samples[("promptops_http_request_seconds_bucket",
                    (("le", "0.0005"), ("method", "prompts/get")))] == 0
    assert not metrics.observed
