"""``bundle.canonical_long`` writes the bytes ``bundle.canonical`` writes.

Long strings (a prompt's text) are escaped over their UTF-8 bytes and spliced into json's
encoding of the rest at placeholders; whatever the strings hold (quotes, backslashes,
controls, characters of any width, a string that looks like a placeholder), the bytes
are json's: a bundle's bytes and digest must not depend on which path encoded them.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from promptops.pipeline.bundle import LONG, canonical, canonical_long

CHARS = st.sampled_from(["a", " ", '"', "\\", "\n", "\r", "\t", "\b", "\f", "\x00", "\x1f",
                         "\x7f", "é", "\u2028", "😀", "/", "0"])
# long strings, made of runs so they reach LONG characters quickly
LONG_TEXT = st.lists(st.tuples(CHARS, st.integers(1, LONG // 3)), min_size=1,
                     max_size=8).map(lambda runs: "".join(c * n for c, n in runs))
SHORT = st.text(CHARS, max_size=6) | st.just("\x000\x00")  # the first placeholder's value
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | SHORT | LONG_TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(CHARS, max_size=4),
                                                                inner, max_size=4),
    max_leaves=8)


@settings(max_examples=200, deadline=None)
@given(VALUES)
def test_the_same_bytes_as_json(value: object) -> None:
    assert canonical_long(value) == canonical(value)


def test_every_ascii_character_and_some_wider_ones_in_a_long_string() -> None:
    for c in [chr(i) for i in range(128)] + ["é", "\u2028", "\ufeff", "😀"]:
        value = {"t": "a" + c * LONG, "n": 1}
        assert canonical_long(value) == canonical(value), repr(c)


def test_a_placeholder_lookalike_falls_back_to_json() -> None:
    text = "x" * LONG
    for value in ({"a": text, "b": "\x000\x00"}, [text, text], {"\x000\x00": text}):
        assert canonical_long(value) == canonical(value)


def test_a_lone_surrogate_fails_as_json_does() -> None:
    for encode in (canonical, canonical_long):
        try:
            encode({"t": "\ud800" * LONG})
        except UnicodeEncodeError:
            continue
        raise AssertionError(f"{encode.__name__} encoded a lone surrogate")
