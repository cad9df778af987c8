"""Python's cycle collector: paused while a package is built or reviewed, and kept off
the served set by a server (:class:`Settler`).

Building allocates millions of small objects (YAML nodes, pydantic models, Jinja ASTs)
that stay alive until the build is done, so the collector's passes walk an ever larger
live heap and find almost nothing to free: at 5,000 prompts they were 29% of a build's
CPU (2.14 s -> 1.53 s paused) and 30% of a review's (8.7 s -> 6.0 s), while peak memory
did not move (186 MB -> 189 MB for the review). The pause is scoped: the collector is
restored as it was when the outermost pause ends (a pause inside a pause, as a review's
builds are, changes nothing), and what little garbage the build left is collected then.
Standard library only: serve's follower builds on serve's cold path.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import cast

#: A whole-heap pass is due once the objects frozen since the last one exceed this share
#: of what that pass left frozen (CPython's own rule for its oldest generation: 1/4)
FULL_SHARE = 4


@contextmanager
def paused() -> Iterator[None]:
    """The collector off inside, back to its previous state after (even on error)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


class Settler:
    """What a serving process does with the collector: the one home of it, made by serve's
    entry point (stdio's ``main``, the team server's ``build``) and called by the
    followers after every swap of the served set (``Background.settler``). A build, a
    test or any other caller of a follower leaves the process's collector as it is.

    Why freeze: at 100,000 prompts the served set is ~700,000 tracked objects that live
    as long as they are served, and every full pass of the collector walked all of them
    to free nothing (the first page of prompts/list spent 8-10 ms of its 10-12 ms of CPU
    in one; paging 1,000 pages 1.2 s instead of 0.5 s). ``gc.freeze`` takes what lives
    now out of every later pass; frozen objects are still freed by their reference counts
    (a replaced bundle's JSON is acyclic), but a frozen *cycle* is never collected until
    ``gc.unfreeze``, which hands every frozen object back to the next pass.

    After a swap (:meth:`swapped`) only what was made since the last swap is walked: the
    collector's pass over the generations it still tracks (the new prompts' objects, the
    rebuild's garbage, the templates compiled by the gets since), then that is frozen
    too. Once per swap, in the follower's thread, after ``list_changed`` is out and the
    build cache written: a swap used to be followed by two passes over the *whole* heap
    (the follower's unfreeze-collect-freeze and, a second later, the team server's same
    three calls), each holding the interpreter 0.2-3 s at 10,000 prompts, which a webhook
    arriving then waited for (docs/benchmarks.md, "The webhook's 202 after a push").

    What a young pass cannot free is a cycle frozen at an earlier swap that a later swap
    replaced: a rebuild base's or a renderer's Jinja environment (its closures and
    templates are cycles) that existed when the last swap was settled. So that such
    garbage stays bounded, a pass over everything (unfreeze, collect, freeze) runs when
    the objects frozen by swaps since the last such pass exceed 1/:data:`FULL_SHARE` of
    what it left frozen: its cost is paid once per that many new objects, as CPython's
    own oldest generation is (a commit changing one prompt of 10,000 freezes a few
    hundred; a working tree rebuilt whole at each save, all of them: a full pass then).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()  # one team server follows several channels
        self._base = 0  # objects frozen after the last whole pass
        self._since = 0  # objects frozen by swaps after it
        self._trim: Callable[[int], object] | None = None  # glibc's, once looked up
        self._trim_looked_up = False  # on the first swap: ctypes stays off the cold start

    def start(self, *, collect: bool) -> None:
        """Freeze what lives now: the served set, once loaded. ``collect``: the start
        built something (its garbage would otherwise stay frozen); a start from the
        cache has none worth the pass on its cold path."""
        with self._lock:
            gc.unfreeze()
            if collect:
                gc.collect()
            gc.freeze()
            self._base = -1  # counted at the first swap: a walk of every frozen object,
            # kept off the cold start

    def swapped(self) -> None:
        """After a new served set replaced the last: what was made since the last swap
        collected and frozen, or everything when enough was frozen since the last whole
        pass (the class docstring); then the memory freed handed back (:meth:`_give_back`)."""
        self._pass()
        self._give_back()

    def _pass(self) -> None:
        with self._lock:
            if self._base < 0:
                self._base = gc.get_freeze_count()
            young = sum(len(gc.get_objects(generation)) for generation in range(3))
            if (self._since + young) * FULL_SHARE > self._base:
                gc.unfreeze()
                gc.collect()
                self._freeze_all()
                return
            gc.collect()  # the generations not frozen: what was made since the last swap
            self._since += len(gc.get_objects(2))  # what survived it, all in the oldest now
            gc.freeze()

    def _give_back(self) -> None:
        """The memory the swap's work freed handed back to the system (glibc's
        ``malloc_trim``; elsewhere nothing). A rebuild's and a relint's temporaries (the
        cached bundle's text cut into prompts, the lint record's JSON, the tree's listing)
        are freed by then, but the C allocator keeps the pages it got for them: at 100,000
        prompts 34 MB of a serving process's ~620 MB after its first commits, which no later
        swap reused. Outside the lock and the interpreter's lock (a foreign call releases
        it): a request is answered meanwhile."""
        if not self._trim_looked_up:
            self._trim, self._trim_looked_up = _malloc_trim(), True
        if self._trim is not None:
            self._trim(0)

    def _freeze_all(self) -> None:
        gc.freeze()
        self._base, self._since = gc.get_freeze_count(), 0


def _malloc_trim() -> Callable[[int], object] | None:
    """glibc's ``malloc_trim``, or None where the C library has none (macOS, musl,
    Windows). ctypes is imported here, on the first swap: never on serve's cold path."""
    try:
        import ctypes

        return cast("Callable[[int], object]", ctypes.CDLL(None).malloc_trim)
    except (ImportError, OSError, AttributeError, TypeError):
        return None
