"""A full :class:`FileMemo` drops its oldest entries, a batch at a time, never all of them.

A memo emptied whole when it filled made every package past its bound (50,000 entries,
~25,000 prompts) empty and refill it during one build, and skip validation on both cores
for the chunks that met a nearly full memo (``prefetch``: a chunk's entries had to fit
before the clear). Now the memo never holds more than its bound, never drops more than one
batch at once, keeps the newest entries (what a caller has just put in is there when it
reads it), and what a build reports is the same whatever the bound.
"""

from __future__ import annotations

from typing import Any, cast

from test_prefetch import _files, _outcome

from promptops.pipeline import prefetch
from promptops.pipeline.memo import EVICT_SHARE, FileMemo
from promptops.pipeline.source import CachingSource, MemorySource
from promptops.pipeline.templates import TemplateIndex
from promptops.pipeline.validate import validate


def test_a_full_memo_drops_its_oldest_batch_never_the_whole_memo() -> None:
    memo = FileMemo(max_entries=16)
    batch = 16 // EVICT_SHARE
    for n in range(200):
        before = len(memo)
        memo.keep_references(f"source {n}", ((None, n),))
        assert len(memo) <= 16
        assert before + 1 - len(memo) <= batch  # dropped at most one batch
        if n >= 16:
            assert len(memo) >= 16 - batch  # never emptied
    held = [int(source.split()[1]) for source in memo.entries()[1]]
    assert held == list(range(200 - len(memo), 200))  # the newest, in order: oldest go first
    assert memo.holds(16 - batch) and not memo.holds(16 - batch + 1)


def test_both_tables_give_up_their_oldest_in_proportion() -> None:
    memo = FileMemo(max_entries=40)
    spec = cast(Any, object())
    for n in range(100):
        memo.keep_prompt(("prompt", f"p{n}", str(n)), cast(Any, object()), spec)
        memo.keep_references(f"source {n}", ())
    prompts, refs = memo.entries()
    assert len(memo) <= 40 and abs(len(prompts) - len(refs)) <= 40 // EVICT_SHARE
    assert [key[1] for key in prompts] == [f"p{n}" for n in range(100 - len(prompts), 100)]
    assert list(refs) == [f"source {n}" for n in range(100 - len(refs), 100)]


def _validated(files: dict[str, str], memo: FileMemo) -> object:
    return _outcome(validate(CachingSource(MemorySource(files)), memo=memo,
                             index=TemplateIndex(memo)))


def test_a_bounded_memo_reports_what_no_bound_reports() -> None:
    """A package several times the bound, built twice through the same memo (a rebuild
    finds part of it), with chunks handed to a forked child where this process may fork:
    the problems and the bundle bytes are the unbounded memo's."""
    files = _files(60)
    saved = prefetch.MIN_FILES, prefetch.CHUNK
    try:
        prefetch.MIN_FILES = 10**9
        unbounded = _validated(files, FileMemo(max_entries=10**9))
        for bound, (min_files, chunk) in [(24, (10**9, 5_000)), (40, (1, 5)), (200, (1, 25))]:
            prefetch.MIN_FILES, prefetch.CHUNK = min_files, chunk
            memo = FileMemo(max_entries=bound)
            assert _validated(files, memo) == unbounded
            assert 0 < len(memo) <= bound
            assert _validated(files, memo) == unbounded  # the rebuild through it
    finally:
        prefetch.MIN_FILES, prefetch.CHUNK = saved
