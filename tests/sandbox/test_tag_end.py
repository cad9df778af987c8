"""Where a tag ends: the scan that skips plain runs finds what a character-by-character
scan finds.

:func:`promptops.sandbox.jinja_source._tag_end` steps over runs of characters that can
neither close a tag, open a string nor open or close a bracket in one regex match (the
standalone whitespace rewrite runs it over every tag of every template). Here it is
compared with the character-by-character scan it replaced, on random tag bodies drawn
from the characters that matter, and the tokenizer over whole sources with both.
"""

from __future__ import annotations

import random

import pytest

from promptops.sandbox import jinja_source
from promptops.sandbox.jinja_source import _CLOSERS, _CLOSING, _OPENERS, _QUOTED, _tag_end

ALPHABET = ["a", " ", "x1", "-", "+", "%", "}", "}}", "%}", "-%}", "+%}", "-}}", "{", "(", ")",
            "[", "]", "'", '"', "\\", "\n", "#", "{%", "{{", "{#", "#}", "|", ".", "é"]


def _reference(source: str, pos: int, closers: tuple[str, ...]) -> tuple[int, int]:
    """The character-by-character scan (promptops before session 10)."""
    depth, n = 0, len(source)
    while pos < n:
        if depth == 0:
            for closer in closers:
                if source.startswith(closer, pos):
                    return pos, pos + len(closer)
        ch = source[pos]
        if ch in "'\"":
            q = _QUOTED.match(source, pos)
            if q is not None:
                pos = q.end()
                continue
        elif ch in _OPENERS:
            depth += 1
        elif ch in _CLOSING and depth:
            depth -= 1
        pos += 1
    return n, n


@pytest.mark.parametrize("seed", range(8))
def test_the_tag_end_is_the_character_scans(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(2000):
        body = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 24)))
        for closers in _CLOSERS.values():
            for start in {0, min(len(body), rng.randint(0, 3))}:
                assert _tag_end(body, start, closers) == _reference(body, start, closers), body


def test_whole_sources_cut_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(26)
    sources = ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 60)))
               for _ in range(3000)]
    got = [jinja_source.tokenize(s) for s in sources]
    monkeypatch.setattr(jinja_source, "_tag_end", _reference)
    assert got == [jinja_source.tokenize(s) for s in sources]
