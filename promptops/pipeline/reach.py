"""What a commit that removes a prompt, or drops an include or a named file, leaves reached.

A bundle holds the templates its prompts reach and the files they name, nothing else. When
a commit removes a prompt file, or an edit drops an include (or a named file), what the
prompt reached leaves the bundle unless something else still reaches it, and the last
bundle does not record who reaches what (a map of 100,000 prompts' edges, kept in memory
for a removal that seldom comes). :func:`still_reached` answers the question for the few
templates and files concerned only, by searching the other prompts for them:

* A template can leave only if it is in the closure ``C`` of what was dropped (through the
  includes of the last and the new sources): any other template is still reached by the
  path that reached it before, none of whose edges was dropped.
* A prompt or template can reach ``t`` in ``C`` only if its text names it: an include names
  its template by one normalised string literal (validate.py refuses anything else), and
  without a backslash (an escape) or two adjacent literals (which Jinja joins) that literal
  is ``t`` itself, so it appears in the text, JSON-escaped in a prompt's canonical encoding.
  A file named by a prompt is named by a path whose last segment is the file's (``inside``
  normalises by removing segments, never by making one).
* Each prompt whose encoding holds one of the names still searched for (or an escape or
  adjacent literals) is validated alone, from its blob, for its exact references, as the
  rebuild validates an edited prompt's old version; the search stops as soon as every
  candidate is found reached. What is never found leaves the bundle.

So the answer is exact (tests/follow/test_incremental_rebuild.py compares with full builds)
and costs one pass of ``bytes.find`` over the prompts' encodings (~68 MB at 100,000
prompts) at most, :data:`CHUNK` prompts at a time so that a name found again early (the
shared preamble) ends the search there, plus a validation per prompt found. The prompts
with an escape or adjacent literals are searched for too, unless the caller kept them
(:func:`suspects`: serve's rebuild finds them once and patches them commit by commit).
None when more than :data:`MAX_VALIDATED` prompts would need validating: the full build
then decides.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from itertools import accumulate, count
from operator import add
from typing import TYPE_CHECKING

from promptops.git.objects import read_batch

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping

    from promptops.pipeline.templates import TemplateIndex

# past this many prompts validated alone, a full build is the cheaper answer
MAX_VALIDATED = 64
# prompts searched at a time (about 2.8 MB of genpkg's canonical JSON)
CHUNK = 4096
# in a prompt's canonical JSON: a backslash of the text (an escape in a Jinja literal), or
# two literals with only spaces between (Jinja joins adjacent literals into one name)
# (each begins with a literal, which the regular expression engine finds fast: a pattern
# that may begin with either of two characters is tried at every position, 2.7 s over the
# 68 MB of 100,000 prompts)
_SUSPECT_ENCODED = (re.compile(rb'\\"(?:[ \t]|\\[nrt])*(?:\\"|\')'),
                    re.compile(rb"'(?:[ \t]|\\[nrt])*(?:\\\"|')"))
_SUSPECT_TEXT = re.compile(r"""\\|["'][ \t\r\n]*["']""")

Refs = tuple[frozenset[str], frozenset[str]]  # the templates a prompt names, its files


def closure(seeds: Iterable[str], sources: Iterable[Mapping[str, str]],
            index: TemplateIndex) -> set[str]:
    """``seeds`` and every template they include, through the includes of each of the
    ``sources`` (the last bundle's templates and the new ones): a superset of what may no
    longer be reached."""
    maps = list(sources)
    found: set[str] = set()
    todo = list(seeds)
    while todo:
        name = todo.pop()
        if name in found:
            continue
        found.add(name)
        for src in maps:
            text = src.get(name)
            if text is not None:
                todo.extend(n for n, _ in index.includes(text))
    return found


def still_reached(candidates: set[str], files: set[str], *, roots: Iterable[frozenset[str]],
                  named: Iterable[Iterable[str]], templates: Mapping[str, str],
                  prompts: tuple[list[str], list[bytes]], skip: set[str],
                  refs_of: Callable[[str], Refs | None], index: TemplateIndex,
                  suspect: list[int] | None = None) -> tuple[set[str], set[str]] | None:
    """Of the templates ``candidates`` (a :func:`closure`) and the named ``files``, those
    still reached: from the direct references ``roots`` of the changed prompts, from the
    templates outside ``candidates`` (``templates``: every template now, path -> source),
    and from the other prompts (``prompts``: their paths and canonical encodings, those in
    ``skip`` left out), each searched as the module docstring says and confirmed by
    ``refs_of(path)`` (what the prompt names directly: templates, files; None when it
    cannot tell). ``suspect``: the positions, in order, of the prompts holding a backslash
    of the text or adjacent literals (:func:`suspects`), when the caller kept them: then
    only the names are searched for. None when the search gives up."""
    reached: set[str] = set()
    pending = set(candidates)

    def mark(names: Iterable[str]) -> None:
        todo = [n for n in names if n in pending]
        while todo:
            name = todo.pop()
            if name not in pending:
                continue
            pending.discard(name)
            reached.add(name)
            text = templates.get(name)
            if text is not None:
                todo.extend(n for n, _ in index.includes(text) if n in pending)

    for direct in roots:
        mark(direct)
    files_pending = set(files)
    for direct_files in named:
        files_pending.difference_update(direct_files)
    for name, text in templates.items():
        if not pending:
            break
        # an include is a statement: a template without one reaches nothing
        if "{%" not in text or name in candidates:
            continue
        if any(t in text for t in pending) or _SUSPECT_TEXT.search(text):
            mark(n for n, _ in index.includes(text))
    if not pending and not files_pending:
        return reached, set(files)
    paths, encoded = prompts
    validated = 0
    for a in range(0, len(encoded), CHUNK):
        if not (pending or files_pending):
            break
        chunk = encoded[a:a + CHUNK]
        marked = None if suspect is None else \
            [k - a for k in suspect[bisect_left(suspect, a):bisect_left(suspect, a + CHUNK)]]
        for k in _hits(chunk, lambda: [*(_needle(t) for t in pending), *(
                _needle(f.rpartition("/")[2]) for f in files_pending)], marked):
            if paths[a + k] in skip:
                continue
            validated += 1
            got = refs_of(paths[a + k]) if validated <= MAX_VALIDATED else None
            if got is None:
                return None
            mark(got[0])
            files_pending.difference_update(got[1])
            if not (pending or files_pending):
                break
    return reached, files - files_pending


def _hits(chunk: list[bytes], needles: Callable[[], list[bytes]],
          marked: list[int] | None = None) -> Iterator[int]:
    """The positions in ``chunk`` (prompts' canonical encodings) of the prompts holding one
    of the ``needles()`` (asked again after each hit: what the caller found it no longer
    looks for), a backslash of the text or adjacent literals (or, given ``marked``, the
    positions of those: not searched again), in order. One text of the chunk, a newline
    between (never in canonical JSON, so no hit spans two prompts): each search is one
    bytes.find or one regular expression over it, in C, and the whole package is searched
    only as far as the caller reads (a chunk at a time: a dropped include of the shared
    preamble is found again in the first prompts, not after 68 MB of searches for what is
    not there at 100,000 prompts)."""
    text = b"\n".join(chunk)
    ends = list(map(add, accumulate(map(len, chunk)), count()))  # each prompt's newline
    found: dict[bytes | re.Pattern[bytes], int] = {}  # each search's next hit (-1: none)
    suspects: list[bytes | re.Pattern[bytes]] = [b"\\\\", *_SUSPECT_ENCODED] \
        if marked is None else []
    pos, first, mark = 0, 0, 0  # first: the prompt at pos; mark: the next of marked
    while True:
        keys: list[bytes | re.Pattern[bytes]] = [*needles(), *suspects]
        for key in keys:
            at = found.get(key)
            if at is None or 0 <= at < pos:  # a hit behind us: look again from here
                if isinstance(key, bytes):
                    at = text.find(key, pos)
                else:
                    m = key.search(text, pos)
                    at = -1 if m is None else m.start()
                found[key] = at
        hits = [at for key in keys if (at := found[key]) >= 0]
        k = bisect_right(ends, min(hits)) if hits else len(chunk)  # the first hit's prompt
        if marked is not None:
            while mark < len(marked) and marked[mark] < first:
                mark += 1
            if mark < len(marked):
                k = min(k, marked[mark])
        if k >= len(chunk):
            return
        yield k
        pos, first = (ends[k] + 1 if k < len(ends) else len(text)), k + 1


def suspects(encoded: list[bytes]) -> list[int]:
    """The positions of the prompts (their canonical encodings) that hold a backslash of the
    text or adjacent literals: what :func:`still_reached` validates whatever it looks for,
    found once per served bundle and then kept (rebuild.py) instead of searched for in
    every prompt at each removal (three searches of 68 MB at 100,000 prompts)."""
    out: list[int] = []
    for a in range(0, len(encoded), CHUNK):
        out += [a + k for k in _hits(encoded[a:a + CHUNK], list)]
    return out

def _needle(name: str) -> bytes:
    """``name`` as it appears inside a string of canonical JSON."""
    from promptops.pipeline.bundle import canonical

    return canonical(name)[1:-1]


def blob_refs(git_dir: str, sha_of: Callable[[str], str | None],
              alone: Callable[[str, bytes], Refs | None]) -> Callable[[str], Refs | None]:
    """``refs_of`` for :func:`still_reached`: each prompt's blob read from git (``sha_of``
    its id in the new tree) and validated on its own (``alone``)."""

    def refs_of(path: str) -> Refs | None:
        sha = sha_of(path)
        blob = read_batch(git_dir, {sha}).get(sha) if sha is not None else None
        return None if blob is None else alone(path, blob)

    return refs_of
