"""Python's cycle collector, paused while a package is built or reviewed.

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
from collections.abc import Iterator
from contextlib import contextmanager


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
