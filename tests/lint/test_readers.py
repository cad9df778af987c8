"""The reader map answers as a walk of the record does, fresh and patched commit after commit.

serve's gate keeps one :class:`~promptops.lint.readers.Readers` per package and patches it from
each commit's record to the next (issue 26 item 3, session 15); a map that drifted from its
record would settle shared files from the wrong first reader. Random records (names that tie
and fold alike, prompts reading each other's files) and random changes the way incremental
lint makes them (unchanged prompts keep their list objects) check every answer against the
walk it replaced.
"""

from __future__ import annotations

import random

from helpers.readers import differences

from promptops.lint.readers import Readers
from promptops.pipeline.names import fold

FILES = [f"partials/p{i}.j2" for i in range(6)] + ["preamble.j2", "data.txt"]
NAMES = ["alpha", "Alpha", "beta", "b-eta", "b_eta", "gamma", "delta", "omega"]


def _record(rng: random.Random, n: int) -> tuple[dict[str, list[str]], dict[str, str]]:
    deps = {f"prompts/x{i}.prompt.yaml": sorted(rng.sample(FILES, rng.randint(0, 4)))
            for i in range(n)}
    return deps, {p: rng.choice(NAMES) for p in deps}


def _walk_first(deps: dict[str, list[str]], names: dict[str, str], f: str,
                leaving: set[str]) -> tuple[str, str, bool] | None:
    """What shared._first_readers gave before the map: one pass over the record."""
    best: tuple[str, str, bool] | None = None
    for p, files in deps.items():
        if p in leaving or f not in files:
            continue
        name = names[p]
        if best is None or name < best[0]:
            best = (name, p, False)
        elif name == best[0]:
            best = (name, min(p, best[1]), True)
    return best


def _check(readers: Readers, deps: dict[str, list[str]], names: dict[str, str],
           rng: random.Random) -> None:
    leaving = set(rng.sample(sorted(deps), min(len(deps), rng.randint(0, 3))))
    for f in [*FILES, "unread.txt", *list(deps)[:2]]:
        reading = {p for p, files in deps.items() if f in files}
        assert readers.read(f) == bool(reading)
        assert set(readers.readers(f)) == reading
        assert readers.beyond(f, leaving) == bool(reading - leaving)
        assert readers.first(f, leaving) == _walk_first(deps, names, f, leaving)
    for name in NAMES:
        assert readers.folded(name) == [fold(n) for n in names.values()].count(fold(name))


def _change(rng: random.Random, deps: dict[str, list[str]], names: dict[str, str],
            fresh: int) -> tuple[tuple[dict[str, list[str]], dict[str, str]], set[str]]:
    """A commit's record as incremental lint makes it (some prompts removed, some reading
    other files or renamed, some added), and the prompts it touched."""
    deps, names = dict(deps), dict(names)
    touched: set[str] = set()
    for p in rng.sample(sorted(deps), min(len(deps), rng.randint(0, 3))):
        del deps[p], names[p]
        touched.add(p)
    for p in rng.sample(sorted(deps), min(len(deps), rng.randint(0, 3))):
        deps[p] = sorted(rng.sample(FILES, rng.randint(0, 4)))
        if rng.random() < 0.3:
            names[p] = rng.choice(NAMES)
        touched.add(p)
    for i in range(rng.randint(0, 3)):
        p = f"prompts/new{fresh}-{i}.prompt.yaml"
        deps[p], names[p] = sorted(rng.sample(FILES, rng.randint(0, 4))), rng.choice(NAMES)
        touched.add(p)
    return (deps, names), touched


def test_a_fresh_map_answers_as_the_walk_does() -> None:
    rng = random.Random(7)
    for n in (0, 1, 5, 40):
        deps, names = _record(rng, n)
        _check(Readers(deps, names), deps, names, rng)


def test_a_map_patched_commit_after_commit_stays_the_records() -> None:
    rng = random.Random(11)
    for series in range(20):
        deps, names = _record(rng, 30)
        readers = Readers(deps, names)
        if series % 2:
            readers = readers.ordered()  # serve's gate orders a kept map at once
        for step in range(12):
            _check(readers, deps, names, rng)  # (sorts some reader lists: patched in order)
            new, touched = _change(rng, deps, names, series * 100 + step)
            readers = readers.patched((deps, names), new, touched)
            deps, names = new
            assert differences(readers, Readers(deps, names), [*FILES, "unread.txt"], NAMES) == []
        _check(readers, deps, names, rng)


def test_a_prompt_left_out_of_touched_is_not_patched() -> None:
    """The contract patching rests on: ``touched`` names every prompt whose entries
    changed (a prompt left out keeps its old reads in the map, which the check sees)."""
    deps, names = {"a.prompt.yaml": ["x.j2"]}, {"a.prompt.yaml": "a"}
    new = {"a.prompt.yaml": ["y.j2"]}
    files, named = ["x.j2", "y.j2"], ["a"]
    assert differences(Readers(deps, names).patched((deps, names), (new, names), set()),
                       Readers(new, names), files, named) == [
        "read(x.j2)", "readers(x.j2)", "first(x.j2)",
        "read(y.j2)", "readers(y.j2)", "first(y.j2)"]
    assert differences(
        Readers(deps, names).patched((deps, names), (new, names), {"a.prompt.yaml"}),
        Readers(new, names), files, named) == []
