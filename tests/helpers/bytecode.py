"""Compiled bytecode for the code every process of a test run imports, checked by hash.

With ``PYTHONDONTWRITEBYTECODE=1`` in the environment (the helpers' shells and the clone
runs of ``.ci/run`` here) no process writes a ``.pyc``, so every ``python -m promptops`` a
test starts, every benchmark script and every xdist worker compiled the promptops modules
it imports from source again: ~0.1 s of CPU per ``check``, ``lint`` or ``build`` process
(0.33 -> 0.22 s), hundreds of them in the process run. The flag stops writing, not
reading: :func:`compile_trees` writes each module's ``.pyc`` once, before the workers
start, where the import system looks (``__pycache__``, ignored by git), and every process
after reads it.

The ``.pyc`` files are *checked-hash* ones (PEP 552): a process compares the source's hash
with the one the ``.pyc`` holds on every import, so a source edited since (in the same
second, to the same size, the case timestamp ``.pyc`` files get wrong) is compiled from
source as before, never run stale. No process is told anything: the environment the tests
give their processes is unchanged, and a run without the flag would have written the same
files itself (as timestamp ones).
"""

from __future__ import annotations

import importlib.util
import py_compile
from collections.abc import Iterable
from pathlib import Path

import pytest

# PEP 552's flags word: bit 0 hash-based, bit 1 check the source against it
CHECKED_HASH_FLAGS = 0b11
# What a test run's processes import from the checkout: the product, the benchmark
# scripts' modules, the tests' helper modules (test modules are pytest's to compile, with
# its assertion rewriting; data folders are never written into)
TREES = ("promptops", "benchmarks", "tests")
DATA = frozenset({"fixtures", "corpus", "data", "floor"})


def _current(source: bytes, cached: Path) -> bool:
    try:
        with cached.open("rb") as f:
            head = f.read(16)
    except OSError:
        return False
    return (head[:4] == importlib.util.MAGIC_NUMBER
            and int.from_bytes(head[4:8], "little") == CHECKED_HASH_FLAGS
            and head[8:16] == importlib.util.source_hash(source))


def modules(root: Path) -> Iterable[Path]:
    """The modules below ``root`` whose bytecode the run's processes read."""
    for tree in TREES:
        for path in (root / tree).rglob("*.py"):
            rel = path.relative_to(root).parts
            if DATA.intersection(rel) or (tree == "tests" and (
                    path.name.startswith("test_") or path.name == "conftest.py")):
                continue
            yield path


def compile_trees(root: Path) -> int:
    """Write a checked-hash ``.pyc`` for each of :func:`modules` whose cached one is missing
    or holds another source; returns how many were written. A folder that cannot be written
    (a read-only checkout) is left as it is: the processes then compile as before."""
    written = 0
    for path in modules(root):
        cached = Path(importlib.util.cache_from_source(str(path)))
        try:
            if _current(path.read_bytes(), cached):
                continue
            py_compile.compile(str(path), cfile=str(cached), doraise=True,
                               invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)
            written += 1
        except (OSError, py_compile.PyCompileError):
            continue
    return written


def rewrite_tests(config: pytest.Config, paths: Iterable[Path]) -> int:
    """Write pytest's rewritten bytecode of the test modules ``paths`` (its assertion
    rewriting, cached as checked-hash ``.pyc`` files since pytest 9.2) where one is missing
    or stale; returns how many were written.

    Each xdist worker collects every module of its run, and with the flag set none of them
    keeps what it rewrote: the 102 modules of the process run were rewritten by all four
    of its workers, the default run's 150 by both of its (1.4-1.5 s of CPU each time), and
    every worker rewrote the modules of hypothesis, xdist and anyio (pytest rewrites every
    distribution that ships a plugin: 0.75 s more). Done here once, before the workers
    start, each worker reads them (pytest reads its cache whatever the flag says): a whole
    run's start, collection included, 26.7 -> 17.9 s of CPU (``-m process``) and 13.9 ->
    8.5 s (the default run). pytest's own functions make and check the file, so a worker
    reads exactly what it would have made; if they change in a later pytest, nothing is
    written and the workers rewrite as before.
    """
    try:
        from _pytest.assertion import rewrite
        from _pytest.assertion.rewrite import assertstate_key

        state = config.stash[assertstate_key]
        # and what this process rewrote already: the conftest files and the modules of the
        # distributions with a pytest plugin that they import (hypothesis, xdist: every
        # worker imports them, 0.75 s of CPU a worker to rewrite)
        hook = state.hook
        paths = [*paths, *(hook._rewritten_names.values() if hook is not None else ())]
        tail, read, make, write, cache_dir = (rewrite.PYC_TAIL, rewrite._read_pyc,
                                              rewrite._rewrite_test, rewrite._write_pyc,
                                              rewrite.get_cache_dir)
    except (ImportError, AttributeError, KeyError):
        return 0
    written = 0
    for path in dict.fromkeys(paths):
        pyc = cache_dir(path) / (path.name[:-3] + tail)
        try:
            if read(path, pyc) is not None:
                continue
            pyc.parent.mkdir(exist_ok=True)
            source_hash, code = make(path, config)
            written += bool(write(state, code, source_hash, pyc))
        except (OSError, SyntaxError, TypeError, ValueError):
            continue  # the worker that imports it will say what is wrong
    return written
