"""The rendered diff's hunks without difflib's full search (promptops/review/linediff.py):
where the common head and tail prove the blocks, they are difflib's, and so is the diff
text, byte for byte; where they do not, difflib decides."""

from __future__ import annotations

import difflib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from promptops.review import linediff
from promptops.review.rendered import hunks

# few distinct lines (repeats, so difflib's choice of block matters), and unique ones
_FEW = st.sampled_from(["A", "B", "", " ", "=== message 1 · user · text ==="])
_LINE = st.one_of(_FEW, st.integers(0, 10_000).map(lambda n: f"line {n}"))


@st.composite
def _pairs(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    """A side and the other: that side with one stretch replaced (lines added, removed or
    changed in one place, as an edited partial does), sometimes a second; long sides (200
    lines or more, where difflib treats frequent lines as popular) now and then."""
    size = draw(st.sampled_from([0, 3, 12, 40, 210, 260]))
    old = draw(st.lists(_LINE, min_size=size, max_size=size + 8))
    if draw(st.booleans()):  # blank lines every few lines: popular in a long side
        old = [line if k % draw(st.integers(2, 9)) else "" for k, line in enumerate(old)]
    new = list(old)
    for _ in range(draw(st.integers(1, 2))):
        at = draw(st.integers(0, len(new)))
        cut = draw(st.integers(0, min(4, len(new) - at)))
        new[at:at + cut] = draw(st.lists(_LINE, max_size=4))
    return (new, old) if draw(st.booleans()) else (old, new)


def _difflib_blocks(a: list[str], b: list[str]) -> list[tuple[int, int, int]]:
    return [tuple(m) for m in difflib.SequenceMatcher(None, a, b).get_matching_blocks()]


@settings(max_examples=300, deadline=None)
@given(_pairs())
def test_proven_blocks_and_hunks_are_difflibs(pair: tuple[list[str], list[str]]) -> None:
    a, b = pair
    found = linediff.matching_blocks(a, b)
    assert found is None or found == _difflib_blocks(a, b)
    assert list(linediff.hunks(a, b)) == list(difflib.unified_diff(a, b, lineterm=""))[2:]
    assert hunks(a, b) == (list(difflib.unified_diff(a, b, lineterm=""))[2:] if a != b else [])


@settings(max_examples=400, deadline=None)
@given(st.lists(_FEW, max_size=14), st.lists(_FEW, max_size=14))
def test_few_lines_repeated_are_difflibs(a: list[str], b: list[str]) -> None:
    found = linediff.matching_blocks(a, b)
    assert found is None or found == _difflib_blocks(a, b)
    assert list(linediff.hunks(a, b)) == list(difflib.unified_diff(a, b, lineterm=""))[2:]


@pytest.mark.parametrize(("a", "b"), [
    (["A", "A", "A"], ["A", "M", "A", "A"]),  # a longer block off the head's diagonal
    (["X", "Y", "S1", "S2"], ["X", "Y", "Z", "Y", "S1", "S2"]),  # the tail takes the Y
    (["A", "B"], ["A", "B", "A", "B"]),
    ([], ["A"]), (["A"], []),
])
def test_the_tricky_cases_are_difflibs(a: list[str], b: list[str]) -> None:
    found = linediff.matching_blocks(a, b)
    assert found is None or found == _difflib_blocks(a, b)
    assert list(linediff.hunks(a, b)) == list(difflib.unified_diff(a, b, lineterm=""))[2:]


def test_a_rendered_pair_with_one_line_added_skips_difflibs_search(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The common shape of a reviewed pair: a long prompt, its Markdown's blank lines and
    rules repeated (popular past 200 lines), one line added near the top. The blocks are
    proven, and difflib's search of the whole pair never runs."""
    body = [line for k in range(70) for line in (f"para {k} one", f"para {k} two", "")]
    body[::30] = ["---"] * len(body[::30])
    a = ["=== message 1 · user · text ===", "Copy 3 of this prompt.", *body]
    b = [*a[:2], "Cite your sources.", *a[2:]]
    searched: list[int] = []
    real = difflib.SequenceMatcher.find_longest_match

    def counted(self: difflib.SequenceMatcher[str], *args: int) -> difflib.Match:
        searched.append(1)
        return real(self, *args)

    expected = list(difflib.unified_diff(a, b, lineterm=""))[2:]
    assert _difflib_blocks(a, b) == linediff.matching_blocks(a, b)
    monkeypatch.setattr(difflib.SequenceMatcher, "find_longest_match", counted)
    searched.clear()
    assert hunks(a, b) == expected == ["@@ -1,5 +1,6 @@", *(" " + x for x in a[:2]),
                                       "+Cite your sources.", *(" " + x for x in a[2:5])]
    assert not searched
