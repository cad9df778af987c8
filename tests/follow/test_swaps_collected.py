"""A served set that a swap replaced is freed by the collector's pass after that swap, for
both followers, while what is served stays frozen: no growth over many swaps.

``collector.Settler`` freezes the served set (the collector's passes skip it) and, after
each swap, collects and freezes only what was made since the last swap. A frozen object
in a cycle is never collected until everything is unfrozen, so this holds only while a
replaced renderer is freed by its reference count: its Jinja environment and compiled
templates (cycles, made by the gets after the swap that served it) are then left to the
next swap's pass. The test renders every prompt between swaps, keeps weak references to
each renderer and its environment, and checks after each swap's pass that every earlier
one is gone. It fails when a renderer's plans hold the renderer (a cycle through a frozen
object: each old renderer stayed, with its templates), when the pass after a swap does
not collect, and on the working-tree follower of the code before (no pass after a save:
the replaced sets waited for the interpreter's own passes, turned off here so that only
the settler's count).
"""

from __future__ import annotations

import gc
import os
import threading
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from follow_helpers import package
from helpers.repo import commit_files, make_repo

from promptops.pipeline.collector import FULL_SHARE, Settler
from promptops.serve.background import Background
from promptops.serve.catalog import Catalog
from promptops.serve.follow import Follower
from promptops.serve.watch import Worktree

SWAPS = 6
NAMES = ("greet", "bye", "third")


class Counted(Settler):
    """The process's settler, telling the test when a swap's pass is done."""

    def __init__(self) -> None:
        super().__init__()
        self.done = threading.Semaphore(0)

    def swapped(self) -> None:
        super().swapped()
        self.done.release()


@pytest.fixture
def settler() -> Iterator[Counted]:
    """A serving process's collector, in this process: the interpreter's own passes off
    (only the settler's count), everything unfrozen and back on at teardown."""
    was = gc.isenabled()
    gc.disable()
    made = Counted()
    try:
        yield made
    finally:
        gc.unfreeze()
        if was:
            gc.enable()


def _save(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _git(root: Path) -> tuple[Background, Callable[[int], None]]:
    repo = make_repo(root, package({name: f"Hello {name}" for name in NAMES}))

    def change(i: int) -> None:
        commit_files(repo, package({"greet": f"Hello {i}"}), f"change {i}")

    return Follower([root], ref=None, log=lambda _line: None), change


def _worktree(root: Path) -> tuple[Background, Callable[[int], None]]:
    make_repo(root, package({name: f"Hello {name}" for name in NAMES}))

    def change(i: int) -> None:
        _save(root / "prompts" / "greet.prompt.yaml", package({"greet": f"Hello {i}"})[
            "prompts/greet.prompt.yaml"])

    return Worktree([root], log=lambda _line: None), change


@pytest.mark.parametrize("make", [_git, _worktree], ids=["git", "worktree"])
def test_each_swap_frees_the_last_set_and_freezes_the_new_one(
        tmp_path: Path, settler: Counted,
        make: Callable[[Path], tuple[Background, Callable[[int], None]]]) -> None:
    follower, change = make(tmp_path / "pkg")
    catalog = Catalog(follower.initial())
    settler.start(collect=follower.built())
    follower.settler = settler
    follower.start(catalog.swap)
    try:
        if isinstance(follower, Worktree):
            assert follower.ready.wait(20), "the watch never started"
        replaced: list[weakref.ref[object]] = []
        frozen = []
        for i in range(SWAPS):
            renderer = catalog.snapshot.renderers[0]
            for name in NAMES:  # compiled templates, plans and the environment: cycles
                assert renderer.get(name, {"topic": "t"})["messages"]
            replaced += [weakref.ref(renderer), weakref.ref(renderer.env())]
            del renderer
            change(i)
            assert settler.done.acquire(timeout=20), f"swap {i} was never settled"
            assert catalog.snapshot.renderers[0].get("greet", {"topic": "t"})[
                "messages"][0]["content"]["text"] == f"Hello {i} t"
            alive = [ref() for ref in replaced if ref() is not None]
            assert not alive, f"after swap {i}: {len(alive)} replaced objects alive: {alive}"
            frozen.append(gc.get_freeze_count())
        # what stays frozen is what is served: the count does not grow with the swaps
        assert max(frozen[SWAPS // 2:]) <= max(frozen[:SWAPS // 2]) + 500, frozen
    finally:
        follower.stop()


def test_a_swap_freezes_what_it_made(tmp_path: Path, settler: Counted) -> None:
    """The collector's passes after a swap skip the new set: it is frozen, not left in
    the generations every pass walks (the reason for freezing: collector.Settler)."""
    follower, change = _git(tmp_path / "pkg")
    catalog = Catalog(follower.initial())
    settler.start(collect=True)
    follower.settler = settler
    follower.start(catalog.swap)
    try:
        change(1)
        assert settler.done.acquire(timeout=20)
        tracked = {id(o) for generation in range(3) for o in gc.get_objects(generation)}
        snapshot = catalog.snapshot
        assert id(snapshot) not in tracked and id(snapshot.renderers[0]) not in tracked
    finally:
        follower.stop()



class _Node:
    self: object


def test_a_swap_collects_what_it_made_and_the_whole_heap_once_enough_was_frozen(
        settler: Counted) -> None:
    """The pass after a swap collects a cycle made since the last one and freezes what
    lives; a cycle frozen at an earlier swap is out of its reach until the objects frozen
    since the last whole pass pass 1/FULL_SHARE of what that pass left frozen."""
    settler.start(collect=True)
    made = _Node()
    made.self = made
    young, kept = weakref.ref(made), _Node()
    del made
    settler.swapped()
    assert young() is None  # collected, not frozen
    assert all(o is not kept for o in gc.get_objects(2))  # frozen: no pass walks it
    frozen = _Node()
    frozen.self = frozen
    old = weakref.ref(frozen)
    settler.swapped()  # frozen while it lived
    del frozen
    settler.swapped()
    assert old() is not None  # a frozen cycle: the young pass cannot see it
    many = [[] for _ in range(gc.get_freeze_count() // FULL_SHARE + 1)]
    settler.swapped()
    assert old() is None, "the whole pass did not come"
    assert len(many) > 0 and kept is not None


def test_after_a_swap_the_freed_memory_is_handed_back_once_looked_up(
        monkeypatch: pytest.MonkeyPatch, settler: Counted) -> None:
    """After each swap's pass, the C allocator's free pages go back to the system
    (glibc's malloc_trim), looked up once; where the C library has none, nothing."""
    from promptops.pipeline import collector

    looked: list[int] = []
    trims: list[int] = []

    def lookup() -> Callable[[int], object]:
        looked.append(1)
        return trims.append

    monkeypatch.setattr(collector, "_malloc_trim", lookup)
    settler.start(collect=False)
    for _ in range(3):
        settler.swapped()
    assert looked == [1] and trims == [0, 0, 0]
    looked_bare: list[int] = []

    def none() -> None:
        looked_bare.append(1)

    monkeypatch.setattr(collector, "_malloc_trim", none)
    bare = Settler()
    bare.start(collect=False)
    bare.swapped()
    bare.swapped()  # no trim to call, and not looked up again
    assert looked_bare == [1] and bare._trim is None
    assert collector.Settler()._trim_looked_up is False  # not on the cold start
