"""Per-file results by content, kept by whoever rebuilds.

Rebuilds mostly see files they have seen before: serve following git rebuilds on every
checkout, and a commit that changes one prompt of 1,000 should re-parse one file. A
:class:`FileMemo` holds each prompt file's parsed and validated result by its content's
name (the git blob id, known before reading from git, computed from the bytes otherwise) and each
template source's includes, so a rebuild skips what did not change.

The memo belongs to its caller, never to the process: serve's follower keeps one for
its lifetime, a build without one starts empty, so an in-process test or command never
inherits what another left behind. Standard library only: the follower creates its memo
on serve's cold path.
"""

from __future__ import annotations

from itertools import islice
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from promptops.pipeline.model import PromptFile
    from promptops.pipeline.yamlio.loader import LoadedFile

Ref = tuple[str | None, int]  # a template reference: the name (None when dynamic), its line
PromptKey = tuple[str, str, "str | bytes"]  # ("prompt", path, blob id or content)
K = TypeVar("K")
V = TypeVar("V")
# A full memo drops this share of its bound, its oldest entries: never the whole memo at
# once (a build of 100,000 prompts past a bound of 50,000 would empty it and refill it)
EVICT_SHARE = 8


class FileMemo:
    """Parsed prompt files by content and template includes by source, bounded.

    A full memo drops its oldest entries (:data:`EVICT_SHARE` of the bound, oldest first
    in each table, the tables in proportion to their sizes), never the whole memo: the
    newest entries are always held, so what a caller has just put in (a forked child's
    share, :mod:`promptops.pipeline.prefetch`) is still there when it reads it
    (:meth:`holds`), at any size of package.

    ``keep_yaml`` says whether a memoised prompt file keeps its parsed YAML beside its
    model: lint reads it (key order); a long-running serve, which never lints, drops it
    as each file is read, since the model already holds the content.
    """

    def __init__(self, *, keep_yaml: bool = True, max_entries: int = 50_000) -> None:
        self.keep_yaml = keep_yaml
        self.max_entries = max_entries
        self._prompts: dict[PromptKey, tuple[LoadedFile, PromptFile]] = {}
        self._refs: dict[str, tuple[Ref, ...]] = {}

    def __len__(self) -> int:
        """Entries held (a follower whose memo is empty has parsed nothing yet)."""
        return len(self._prompts) + len(self._refs)

    def prompt(self, key: PromptKey) -> tuple[LoadedFile, PromptFile] | None:
        return self._prompts.get(key)

    def keep_prompt(self, key: PromptKey, loaded: LoadedFile, spec: PromptFile) -> None:
        if not self.keep_yaml:
            loaded.shed()
        self._make_room()
        self._prompts[key] = (loaded, spec)

    def references(self, source: str) -> tuple[Ref, ...] | None:
        return self._refs.get(source)

    def keep_references(self, source: str, refs: tuple[Ref, ...]) -> None:
        self._make_room()
        self._refs[source] = refs

    def holds(self, count: int) -> bool:
        """Whether the last ``count`` entries put in are all still held once put in, at
        any fill: what an eviction leaves is never less than the bound less its batch."""
        return count <= self.max_entries - self._batch()

    def _batch(self) -> int:
        return max(1, self.max_entries // EVICT_SHARE)

    def entries(self) -> tuple[dict[PromptKey, tuple[LoadedFile, PromptFile]],
                               dict[str, tuple[Ref, ...]]]:
        """Everything held, to hand to another memo (:mod:`promptops.pipeline.prefetch`)."""
        return self._prompts, self._refs

    def take(self, entries: tuple[dict[PromptKey, tuple[LoadedFile, PromptFile]],
                                  dict[str, tuple[Ref, ...]]]) -> None:
        """Keep another memo's :meth:`entries`, as if they had been kept here one by one."""
        prompts, refs = entries
        for key, (loaded, spec) in prompts.items():
            self.keep_prompt(key, loaded, spec)
        for source, found in refs.items():
            self.keep_references(source, found)

    def _make_room(self) -> None:
        """When full, the oldest :meth:`_batch` entries go (a rebuild re-parses them,
        nothing is wrong): dropping a batch, not one entry, keeps each insertion O(1)
        amortised (a dict's freed slots at its front are skipped until it resizes)."""
        held = len(self._prompts) + len(self._refs)
        if held < self.max_entries or held == 0:
            return
        drop = min(self._batch(), held)
        prompts = min((drop * len(self._prompts) + held // 2) // held, len(self._prompts))
        _drop_oldest(self._prompts, prompts)
        _drop_oldest(self._refs, drop - prompts)


def _drop_oldest(table: dict[K, V], count: int) -> None:
    """The first ``count`` entries of ``table`` removed (a dict keeps insertion order)."""
    for key in list(islice(table, count)):
        del table[key]
