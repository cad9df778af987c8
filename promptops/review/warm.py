"""The first build of a large review validated on both cores.

A review's first build (HEAD's; BASE's then comes mostly from the shared memo) validates
every prompt file: reading its YAML, checking it against the model and parsing its
templates. That was the longest stretch of a review on one core, nothing else can run
before it (lint, the bundles and the renders all need a built package), and it is made of
independent per-file work whose results the build keeps in the caller's
:class:`~promptops.pipeline.memo.FileMemo` by content.

So before the build, a forked child validates part of the prompt files into a memo of its
own while this process validates the rest into the review's (split by bytes,
:func:`~promptops.pipeline.prefetch.halves`: real prompts range from 200 bytes to 200 KB);
the child sends back what it kept (:meth:`~promptops.pipeline.memo.FileMemo.entries`: the
parsed file and its model by content key, each template's references by source), without
the files' bytes, which this process holds (:func:`~promptops.pipeline.prefetch.sendable`:
half of the pickle at `real`), and this process adds it to the review's memo with the blob
ids the child hashed, so the build that follows hashes no file again. That build finds
every sound file in the memo and validates the package as before: the problems, the
package and the bundle are what they were, because a file the child could not validate
was not kept, and the build validates it here, positioned as ever. The child keeps no
template ASTs (a template of a layout it has seen gives its references without one:
:meth:`~promptops.pipeline.astshapes.AstShapes.known_references`): lint parses those
templates on its own core when it inspects them.

The fork is the build's and lint's (:func:`promptops.pipeline.prefetch.forked`: the child
leaves by ``os._exit``, its bytes come down a pipe). The child's validation must not fork
again: its index is ``one_core``, which the build's chunked validation reads as "do not
fork" (:mod:`promptops.pipeline.prefetch`); a grandchild validating a quarter of the files
cost a second fork and a second pickling of its half for no core left to run on.

Only on Linux (fork: the child starts with the files already read, nothing is sent to it),
with a second core, and from :data:`WARM_PROMPTS` prompt files; a child that fails or
dies costs only its half, which the build then validates here.
"""

from __future__ import annotations

import pickle
from typing import TYPE_CHECKING

from promptops.pipeline.memo import FileMemo
from promptops.pipeline.prefetch import forked, halves, received, sendable
from promptops.pipeline.templates import TemplateIndex
from promptops.pipeline.validate import is_prompt_file, validate_some
from promptops.review.early import forks

if TYPE_CHECKING:
    from promptops.pipeline.source import CachingSource

WARM_PROMPTS = 500  # below this a fork and the pickling cost more than half the files
# What a byte weighs in the child against this process (prefetch.halves): the child also
# pickles its half, but this process keeps every template's tree for the lint gate, which
# costs about as much again on real prompts and more where includes nest (`deep`: 0.77 s
# here to the child's 0.54 + 0.08 at an even split). No one weight suits every shape;
# at 1.0 both halves, and the unpickling after them, ran shorter than every other file's.
CHILD_WEIGHT = 1.0


def prevalidate(source: CachingSource, index: TemplateIndex) -> None:
    """Fill ``index.memo`` with every sound prompt file of ``source`` (and its templates'
    references), half of them validated by a forked child; nothing when the package is
    small or this platform does not fork."""
    files = [p for p in source.files() if is_prompt_file(p)]
    if not WARM_PROMPTS <= len(files) < index.memo.max_entries // 2 or not forks():
        return  # (a memo too small for both halves is emptied as it fills: no gain)
    source.prefetch()  # the files read once, here, before the fork: the child reads none
    source.read_ahead(files)
    mine, theirs = halves(source, files, weight=CHILD_WEIGHT)  # by bytes, as the build's

    def child() -> bytes:
        own = FileMemo()
        # one_core: the child's validation does not fork a grandchild (module docstring);
        # no tree kept, so a template of a known layout makes none, only its references
        validate_some(source, theirs, [], memo=own, index=TemplateIndex(own, one_core=True))
        return pickle.dumps(sendable(source, own), protocol=pickle.HIGHEST_PROTOCOL)

    _, data = forked(child, lambda: validate_some(source, mine, [], memo=index.memo,
                                                  index=index))
    if data is not None:  # None: the child failed; the build validates its half here
        index.memo.take(received(source, pickle.loads(data)))
