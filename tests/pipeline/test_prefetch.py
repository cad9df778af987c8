"""Validation on both cores (``promptops.pipeline.prefetch``) changes nothing it reports.

A forked child validates every other prompt file into a memo of its own and hands the
entries over pickled; the validator's loop then runs as in one process. Whatever the
files (sound, broken YAML, a schema violation, a template that does not parse, a missing
include, a duplicate name), the problems and the bundle bytes must be the one-process
build's, and the child's half must really arrive (or the path would be dead code).
The comparison of the two outcomes runs in a fresh interpreter
(``test_prefetch_process.py``): prefetch never forks beside another thread, and a test
process may hold threads earlier tests left.
"""

from __future__ import annotations

import os

from helpers.broken import BROKEN

from promptops.pipeline import prefetch
from promptops.pipeline.bundle import serialise
from promptops.pipeline.memo import FileMemo
from promptops.pipeline.source import CachingSource, MemorySource
from promptops.pipeline.templates import TemplateIndex
from promptops.pipeline.validate import Validated, _warm, validate

MANIFEST = "name: demo\nversion: 1.0.0\n"
SOUND = ("description: prompt {k}\narguments:\n  - name: who\n    required: true\n"
         "messages:\n  - role: system\n    text: |\n      Copy {k}.\n"
         "      {{% if who %}}Hello {{{{ who }}}}{{% endif %}}\n"
         "      {{% include 'partials/p.j2' %}}\n"
         "  - role: user\n    text: \"Q{k}: {{{{ who }}}}\"\n")


def _files(n: int) -> dict[str, str]:
    files = {"promptops.yaml": MANIFEST, "partials/p.j2": "Shared {{ who }}.\n"}
    for k in range(n):
        files[f"prompts/p-{k}.prompt.yaml"] = BROKEN.get(k, SOUND.format(k=k))
    return files


def _validate(files: dict[str, str]) -> Validated:
    memo = FileMemo()
    return validate(CachingSource(MemorySource(files)), memo=memo, index=TemplateIndex(memo))


def _outcome(found: Validated) -> tuple[list[tuple[str, int, int, str, str]], bytes | None]:
    from promptops.pipeline.bundle import compile_bundle

    problems = [(p.path, p.line, p.col, p.code, p.message) for p in found.problems]
    return problems, (serialise(compile_bundle(found.package))
                      if found.package is not None else None)


def one_and_both(n: int = 60) -> tuple[object, object]:
    """The outcome of validating :func:`_files` in one process, then on both cores (three
    chunks, a child each); a fresh process calls it too
    (``test_prefetch_process.py``: prefetch never forks beside other threads)."""
    files = _files(n)
    saved = prefetch.MIN_FILES, prefetch.CHUNK
    try:
        prefetch.MIN_FILES = 10**9
        one = _outcome(_validate(files))
        prefetch.MIN_FILES, prefetch.CHUNK = 1, 25
        # a fresh process with two cores must fork (or the comparison proves nothing)
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
        assert _can_fork_here() == (cores >= 2)
        both = _outcome(_validate(files))
    finally:
        prefetch.MIN_FILES, prefetch.CHUNK = saved
    assert {p[3] for p in one[0]} == {"PO101", "PO102", "PO103", "PO106", "PO301"}
    assert one[1] is not None  # the partial package of the sound files
    return one, both


def _can_fork_here() -> bool:
    return prefetch._can_fork(TemplateIndex())


def test_the_childs_half_arrives_in_the_memo() -> None:
    files = _files(40)
    source = CachingSource(MemorySource(files))
    paths = sorted(p for p in files if p.startswith("prompts/"))
    memo = FileMemo()
    prefetch._both_cores(source, paths, memo, TemplateIndex(memo), _warm)
    held = {key[1] for key in memo.entries()[0]}
    theirs = prefetch.halves(source, paths)[1]
    child = set(theirs) - {f"prompts/p-{k}.prompt.yaml" for k in BROKEN}
    assert child and child <= held  # validated by the child only
    assert not held & {f"prompts/p-{k}.prompt.yaml" for k in (3, 8)}  # problems stay out
    # the child's files came without their bytes, which this process gave back
    loaded = {key[1]: got[0] for key, got in memo.entries()[0].items()}
    assert all(loaded[p].text == files[p] for p in child)
    k = next(p for p in sorted(child)).removeprefix("prompts/p-").removesuffix(".prompt.yaml")
    assert any(f"Copy {k}." in src for src in memo.entries()[1])  # a child's template's refs


def test_the_halves_are_balanced_by_bytes_not_by_files() -> None:
    """One 200 KB prompt among small ones: every other file would give one side all of
    it; the split by bytes gives the child a little less than half the bytes (it also
    pickles what it validated), keeps the order, and loses no file."""
    files = _files(40)
    big = "prompts/p-5.prompt.yaml"
    files[big] = SOUND.format(k=5) + "  - role: user\n    text: |\n" + "      x\n" * 25_000
    source = CachingSource(MemorySource(files))
    paths = sorted(p for p in files if p.startswith("prompts/"))
    mine, theirs = prefetch.halves(source, paths)
    assert sorted(mine + theirs) == paths and mine == sorted(mine) and theirs == sorted(theirs)
    size = {p: len(files[p].encode()) for p in paths}
    here, there = sum(size[p] for p in mine), sum(size[p] for p in theirs)
    assert abs(here - prefetch.CHILD_WEIGHT * there) <= size[big]  # within one file
    # every small file after the big one goes to the other side (every other file would
    # have given half of them to the big one's side)
    after = paths[paths.index(big) + 1:]
    side = mine if big in theirs else theirs
    assert after and set(after) <= set(side)


def test_a_kept_ast_index_or_a_small_chunk_stays_in_one_process() -> None:
    assert not prefetch._can_fork(TemplateIndex(keep_asts=True))
    assert not prefetch._can_fork(TemplateIndex(one_core=True))  # a forked child's
    files = _files(5)
    memo = FileMemo()
    list(prefetch.chunks(CachingSource(MemorySource(files)), sorted(files), memo,
                         TemplateIndex(memo), lambda _: True, _warm))
    assert len(memo) == 0  # below MIN_FILES: nothing validated ahead
