"""Lint collects garbage less often while it validates and lints (a fifth of a cold run on
10,000 prompts), and leaves the process's threshold as it found it: after a run, after a
failure, and untouched from a background thread (serve's gate)."""

from __future__ import annotations

import gc
import threading

import pytest

from promptops.lint.runner import rarer_collections


def test_raised_inside_and_restored_after_even_on_error() -> None:
    before = gc.get_threshold()
    with rarer_collections():
        assert gc.get_threshold()[0] >= 20_000
        assert gc.get_threshold()[1:] == before[1:]
    assert gc.get_threshold() == before
    with pytest.raises(RuntimeError), rarer_collections():
        raise RuntimeError("a failed run")
    assert gc.get_threshold() == before


def test_a_background_thread_leaves_the_threshold_alone() -> None:
    before = gc.get_threshold()
    seen: list[tuple[int, ...]] = []

    def run() -> None:
        with rarer_collections():
            seen.append(gc.get_threshold())

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    assert seen == [before] and gc.get_threshold() == before
