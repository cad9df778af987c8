"""Who reads each file, by a lint record: what an incremental run asks of the record.

An incremental run (:mod:`promptops.lint.incremental`) asks the last record which prompts
read a changed or removed file, which file any prompt still reads, which prompt reads a
shared file first in the package's order (by name) and whether a removed prompt's name
folds onto another's. Each was a walk of every prompt's reads or names: at 100,000
prompts (serve following HEAD) 150-250 ms of CPU a commit for a change of one prompt
(docs/benchmarks.md, "A commit at 100,000 prompts in proportion to the change, session
14"). :class:`Readers` answers them from a map kept beside the record: file -> its readers,
each file's sorted by (name, path) once it is asked for its first reader; a name's fold ->
how many prompts have it. Built once from a record (``promptops lint``'s incremental run
builds it as it walked before), and kept patched by serve's gate from one commit's record to
the next (:meth:`Readers.patched`): only the prompts the change touched.

It holds what the record says and nothing more: every answer is the one the walk of
``deps`` and ``names`` gives (tests/lint/test_readers.py compares them after random
changes).
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections import Counter
from collections.abc import Iterator, Mapping
from itertools import islice

from promptops.pipeline.names import fold

Reader = tuple[str, str]  # (prompt name, prompt file)


class Readers:
    """file -> the prompt files that read it (with their names), and the names' folds."""

    def __init__(self, deps: Mapping[str, list[str]], names: Mapping[str, str]) -> None:
        self._by: dict[str, list[Reader]] = {}
        self._sorted: set[str] = set()  # files whose reader list is in order
        for p, files in deps.items():
            entry = (names[p], p)
            for f in files:
                got = self._by.get(f)
                if got is None:
                    self._by[f] = [entry]
                else:
                    got.append(entry)
        self._folds = Counter(fold(n) for n in names.values())

    def read(self, path: str) -> bool:
        """Whether some prompt reads ``path``."""
        return path in self._by

    def readers(self, path: str) -> Iterator[str]:
        """The prompt files that read ``path``."""
        return (p for _, p in self._by.get(path, ()))

    def beyond(self, path: str, leaving: set[str] | frozenset[str]) -> bool:
        """Whether a prompt not in ``leaving`` reads ``path`` (stops at the first)."""
        return any(p not in leaving for _, p in self._by.get(path, ()))

    def folded(self, name: str) -> int:
        """How many prompts have a name that folds as ``name`` does."""
        return self._folds[fold(name)]

    def first(self, path: str, leaving: set[str]) -> tuple[str, str, bool] | None:
        """The first reader of ``path`` not in ``leaving`` in the package's order: (name,
        path, whether another such reader has that name too; the path is then the least
        of theirs); None when every reader is leaving."""
        got = self._ordered(path)
        for i, (name, p) in enumerate(got):
            if p in leaving:
                continue
            tie = any(n == name and q not in leaving
                      for n, q in _while_named(got, i + 1, name))
            return name, p, tie
        return None

    def ordered(self) -> Readers:
        """Every file's readers in order now (a kept map: not on a commit's path later)."""
        for path, got in self._by.items():
            if path not in self._sorted:
                got.sort()
        self._sorted = set(self._by)
        return self

    def _ordered(self, path: str) -> list[Reader]:
        got = self._by.get(path, [])
        if path not in self._sorted:
            got.sort()
            self._sorted.add(path)
        return got

    def patched(self, old: tuple[Mapping[str, list[str]], Mapping[str, str]],
                new: tuple[Mapping[str, list[str]], Mapping[str, str]],
                touched: frozenset[str] | set[str]) -> Readers:
        """This map, changed in place from the record ``old`` (deps, names) to ``new``,
        where only the prompt files in ``touched`` (an incremental run's
        :attr:`~promptops.lint.incremental.Relinted.touched`) may read other files, have
        another name, or be gone or come: it costs the change, not the package (a pass
        over 100,000 prompts to find them was 30-75 ms, half of what the map saves)."""
        old_deps, old_names = old
        new_deps, new_names = new
        for p in touched:
            if p in old_deps:
                self._drop(p, old_deps[p], old_names[p])
            if p in new_deps:
                self._add(p, new_deps[p], new_names[p])
        return self

    def _drop(self, p: str, files: list[str], name: str) -> None:
        entry = (name, p)
        for f in files:
            got = self._by[f]
            if f in self._sorted:
                del got[bisect_left(got, entry)]
            else:
                got.remove(entry)
            if not got:
                del self._by[f]
                self._sorted.discard(f)
        self._folds[fold(name)] -= 1

    def _add(self, p: str, files: list[str], name: str) -> None:
        entry = (name, p)
        for f in files:
            got = self._by.get(f)
            if got is None:
                self._by[f] = [entry]
                self._sorted.add(f)
            elif f in self._sorted:
                insort(got, entry)
            else:
                got.append(entry)
        self._folds[fold(name)] += 1


def _while_named(got: list[Reader], start: int, name: str) -> Iterator[Reader]:
    """The readers from ``start`` on while they have ``name``."""
    for entry in islice(got, start, None):  # (a slice would copy the rest of the list)
        if entry[0] != name:
            return
        yield entry
