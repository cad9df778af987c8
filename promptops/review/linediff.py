"""difflib's unified diff of two lists of lines, without its quadratic-ish first search
when the answer can be proven from the lines' common head and tail.

A review's rendered pair is usually one end with a few lines added or removed in one
place (an edited partial): a long common head or tail. ``difflib.SequenceMatcher`` still
searches every line of both ends for its first longest matching block, ~0.1 ms a pair of
~115 lines, 0.35 s of each render worker's CPU on the `real` diff shape (session 21).
:func:`matching_blocks` finds the same blocks for such pairs from counts of the lines
alone, and returns None whenever it cannot prove them, where the caller asks difflib.

What it must reproduce (``SequenceMatcher(None, a, b)``, autojunk on): in a range of both
sequences, ``find_longest_match`` takes the longest run of consecutive equal pairs along
one diagonal whose lines are not *popular* (b has 200 lines or more and the line occurs
in b more than ``len(b) // 100 + 1`` times: kept out of its index), the one ending first
in ``a`` (then in ``b``) among the longest, and then extends it both ways over equal lines
of any kind; the blocks of the ranges to its left and right are found the same way.

The proof, for a range whose common head (P: ``a[:p] == b[:p]``) and common tail (S) do
not overlap in either sequence. Call a line of ``a`` a *blocker* when it is not in the
range of b, or popular (no run holds it), or when it lies in P or S and occurs once in
the range of b: a run through it pairs it with that one occurrence, so runs on its
block's diagonal only, and P and S are the longest equal runs of their diagonals (nothing
equal before or after them), so such a run lies inside P or S. Every other run holds no
blocker, so is no longer than the widest stretch of ``a`` free of blockers (``gap``).
When P or S holds a run of unpopular lines longer than ``gap``, the longest run is in P
or S, and P's wins a tie (it ends first in ``a``); extended over equal lines it is all of
P, or of S. What is left is the range beside it, done the same way; a range whose ``a``
holds no popular line is difflib's own search of the slices with nothing popular
(``autojunk=False``), exactly; any other is None. ``tests/review/test_linediff.py``
checks the blocks, and the diff text, against difflib's on generated and real pairs.
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Iterator, Set
from itertools import compress, count
from operator import ne

Lines = list[str]
_Block = tuple[int, int, int]  # a's start, b's start, length


def matching_blocks(a: Lines, b: Lines) -> list[_Block] | None:
    """``SequenceMatcher(None, a, b).get_matching_blocks()`` (as tuples, the (len(a),
    len(b), 0) sentinel last), or None when the proof (module docstring) does not hold."""
    popular: frozenset[str] = frozenset()
    if len(b) >= 200:
        most = len(b) // 100 + 1
        popular = frozenset(line for line, n in Counter(b).items() if n > most)
    found = _blocks(a, b, popular, 0, 0)
    if found is None:
        return None
    found.sort()
    merged: list[_Block] = []
    for i, j, k in found:
        if merged and merged[-1][0] + merged[-1][2] == i and merged[-1][1] + merged[-1][2] == j:
            i0, j0, k0 = merged[-1]
            merged[-1] = (i0, j0, k0 + k)
        else:
            merged.append((i, j, k))
    merged.append((len(a), len(b), 0))
    return merged


def _blocks(a: Lines, b: Lines, popular: Set[str], ai: int, bj: int) -> list[_Block] | None:
    """The matching blocks of the slices ``a`` and ``b`` (at ``ai``, ``bj`` of the whole
    sequences), with ``popular`` the whole b's popular lines; None when unproven."""
    la, lb = len(a), len(b)
    if not la or not lb:
        return []
    n = min(la, lb)
    # the common head's and tail's lengths: the first unequal place from each end
    p = next(compress(count(), map(ne, a, b)), n)
    s = next(compress(count(), map(ne, reversed(a), reversed(b))), n) if p < n else 0
    chosen = _longest(a, b, popular, p, s) if p + s <= n else None
    if chosen is None:
        if popular and not popular.isdisjoint(a):
            return None
        plain = difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks()
        return [(ai + i, bj + j, k) for i, j, k in plain if k]
    if chosen == "head":
        rest = _blocks(a[p:], b[p:], popular, ai + p, bj + p)
        return None if rest is None else [(ai, bj, p), *rest]
    rest = _blocks(a[:la - s], b[:lb - s], popular, ai, bj)
    return None if rest is None else [*rest, (ai + la - s, bj + lb - s, s)]


def _longest(a: Lines, b: Lines, popular: Set[str], p: int, s: int) -> str | None:
    """"head" or "tail" when the longest match of the ranges is provably all of the
    common head (``p`` lines) or tail (``s``), else None (module docstring)."""
    la, longest = len(a), max(p, s)
    if not popular and longest:
        # Nothing popular: the runs in P and S are P and S. One blocker at q cuts every
        # other run to at most max(q, la - 1 - q) lines, shorter than the longest of P
        # and S when q is in [la - longest, longest): a few places there are tried
        # first, the stretches of every line of a counted only when none is a blocker.
        mid = la // 2
        for q in (mid, mid - 1, mid + 1, mid - 2, mid + 2):
            if la - longest <= q < longest and (q < p or q >= la - s) and b.count(a[q]) == 1:
                return "head" if p >= s else "tail"
    seen: set[str] = set()
    # the lines b holds more than once, but for the popular ones (no run holds those)
    again = {line for line in b if line in seen or seen.add(line)}  # type: ignore[func-returns-value]
    again.difference_update(popular)
    # per line of P and S, 0 for a blocker; the lines between them are taken as none
    # (the widest stretch can only be overstated: a proof may be missed, never wrong)
    flags = bytes(map(again.__contains__, a))
    tail = len(a) - s
    widest = _widest(flags[:p] + b"\1" * (tail - p) + flags[tail:], 0)
    head, rest = _run(a[:p], popular), _run(a[tail:], popular)
    if max(head, rest) <= widest:
        return None
    return "head" if head >= rest else "tail"


def _run(lines: Lines, popular: Set[str]) -> int:
    """The longest run of consecutive lines none of which is popular."""
    if not popular:
        return len(lines)
    return _widest(bytes(map(popular.__contains__, lines)), 1)


def _widest(flags: bytes, stop: int) -> int:
    """The longest stretch of ``flags`` without the byte ``stop``."""
    return max(map(len, flags.split(bytes((stop,)))))


class _Known(difflib.SequenceMatcher[str]):
    """A matcher whose blocks are given: difflib's own opcodes and grouping on them."""

    def __init__(self, blocks: list[_Block]) -> None:
        super().__init__(None, (), ())
        self._given = blocks

    def get_matching_blocks(self) -> list[difflib.Match]:
        return [difflib.Match(*m) for m in self._given]


def _span(start: int, stop: int) -> str:
    """A hunk header's range as unified diffs write it: 1-based start and length, the
    length left out when 1, the start one back when the range is empty."""
    if stop - start == 1:
        return str(start + 1)
    return f"{start + 1 if stop > start else start},{stop - start}"


def hunks(a: Lines, b: Lines, context: int = 3) -> Iterator[str]:
    """The lines of ``difflib.unified_diff(a, b, lineterm="")`` after its two label lines,
    from proven blocks where :func:`matching_blocks` finds them."""
    blocks = matching_blocks(a, b)
    if blocks is None:
        yield from list(difflib.unified_diff(a, b, lineterm=""))[2:]
        return
    for group in _Known(blocks).get_grouped_opcodes(context):
        first, last = group[0], group[-1]
        yield f"@@ -{_span(first[1], last[2])} +{_span(first[3], last[4])} @@"
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                yield from (" " + line for line in a[i1:i2])
                continue
            if tag != "insert":
                yield from ("-" + line for line in a[i1:i2])
            if tag != "delete":
                yield from ("+" + line for line in b[j1:j2])
