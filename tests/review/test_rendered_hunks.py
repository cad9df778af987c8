"""The rendered diff is made in two parts, the hunks (in the render worker) and the labels
(in the reviewing process); put together they are difflib's unified diff, byte for byte."""

from __future__ import annotations

import difflib

from hypothesis import given, settings
from hypothesis import strategies as st

from promptops.review.rendered import hunks, labelled, unified

# few distinct lines, so lists repeat lines and difflib's block choice matters
LINES = st.lists(st.sampled_from(["A", "B", "", " ", "C\t", "message 1 user text"]),
                 max_size=14)
LABEL = st.sampled_from(["main: p", "", "a b\tc", "HEAD: case 1"])


def _difflib(old: list[str], new: list[str], a: str, b: str) -> str:
    return "\n".join(difflib.unified_diff(old, new, fromfile=a, tofile=b, lineterm=""))


@settings(max_examples=400, deadline=None)
@given(LINES, LINES, LABEL, LABEL)
def test_labelled_hunks_are_difflibs_unified_diff(old: list[str], new: list[str],
                                                  a: str, b: str) -> None:
    assert labelled(hunks(old, new), a, b) == unified(old, new, a, b) == _difflib(old, new, a, b)


def test_equal_lines_have_no_hunks_and_no_diff() -> None:
    assert hunks(["A", "B"], ["A", "B"]) == [] and labelled([], "a", "b") == ""
    assert hunks([], []) == []


def test_hunks_carry_no_labels() -> None:
    body = hunks(["A", "B", "C"], ["A", "X", "C"])
    assert body == ["@@ -1,3 +1,3 @@", " A", "-B", "+X", " C"]
