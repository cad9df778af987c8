"""Lint's cheaper scans (issue 26, session 18) answer what the scans they replaced did.

A rule that reads the raw bytes to skip a file must skip exactly the files whose text
holds nothing to find, and one scan for a tag must say what three did: each form is
compared with the old one on generated input, byte order marks and invalid bytes
included.
"""

from __future__ import annotations

import random

from promptops.lint.rules.po501_secret import (
    _A,
    _GH,
    _SPLIT,
    HINTS,
    _hint_lines,
    _scan,
    _scan_raw,
    may_hold,
)
from promptops.lint.rules.po502_invisible_unicode import _ANY, INVISIBLE, beyond_ascii
from promptops.pipeline.templates import _TAGS, tag_free

_BOM = "\ufeff"


def test_the_characters_past_ascii_are_the_texts_in_order() -> None:
    rnd = random.Random(1802)
    pieces = ["word ", "\n", "\r\n", "\t", "é", "日本", "’", "—", "🙂", "\u00a0", _BOM,
              *sorted(INVISIBLE)[:8], "\U000e0041", "a" * 40]
    found = 0
    for _ in range(4000):
        text = "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 14)))
        for raw in (text.encode(), _BOM.encode() + text.encode()):
            decoded = raw.decode("utf-8-sig")
            beyond = beyond_ascii(raw)
            assert beyond == "".join(c for c in decoded if not c.isascii()), raw
            # the rule's test: the bytes say "nothing" exactly where the text does
            assert (_ANY.search(beyond) is None) == (_ANY.search(decoded) is None), raw
            found += _ANY.search(decoded) is not None
    assert found > 1000


def test_a_mark_is_dropped_only_where_decoding_drops_it() -> None:
    # a file starting with two marks keeps the second in its text (an invisible character),
    # and a mark that is the first character past ASCII but not the file's first is kept
    assert beyond_ascii(b"\xef\xbb\xbf\xef\xbb\xbfhi") == _BOM
    assert beyond_ascii(b"hi \xef\xbb\xbf there") == _BOM
    assert beyond_ascii(b"\xef\xbb\xbfhi \xc3\xa9") == "é"


def test_bytes_that_do_not_decode_give_no_answer() -> None:
    assert beyond_ascii(b"caf\xe9") is None
    assert beyond_ascii(None) is None
    assert beyond_ascii(b"plain") == ""


def test_a_source_is_tag_free_exactly_where_no_tag_opener_is_in_it() -> None:
    rnd = random.Random(1803)
    pieces = ["{", "{{", "{%", "{#", "}", "}}", "%}", "#}", "%", "#", "text ", "\n", "é",
              "{ {", "{\n%", "🙂"]
    for _ in range(5000):
        source = "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 10)))
        assert tag_free(source) == (not any(t in source for t in _TAGS)), source
    assert not tag_free("x {% raw %}") and not tag_free("{#") and tag_free("{ { % #")


def test_the_hinted_lines_are_the_lines_holding_a_hint() -> None:
    """PO501's lines to try (session 21: seven scans, not one alternation of every hint)
    are every line holding a hint, overlapping and adjacent hints and a hint at either end
    included."""
    rnd = random.Random(2121)
    pieces = [*HINTS, "sk", "gh", "A", "KIA", "_", "-", "\n", "\r\n", " ", "word", "é"]
    for _ in range(4000):
        text = "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 14)))
        expected, start = [], 0
        for line in text.split("\n"):
            if any(h in line for h in HINTS):
                expected.append(start)
            start += len(line) + 1
        assert _hint_lines(text, _SPLIT, (_GH, _A), "\n") == expected, text


def test_the_secret_scan_of_the_bytes_is_the_scan_of_the_text() -> None:
    """PO501 reads a text past ASCII in its UTF-8 bytes (session 21): the same hints, lines
    and columns (in characters), a byte order mark dropped as decoding drops it."""
    rnd = random.Random(2122)
    pieces = ["sk-" + "c" * 40, "AKIA" + "ABCDEFGHIJKLMNOP", "ghp_" + "a" * 36, "task-x",
              "-----BEGIN PRIVATE KEY-----", "xoxb-" + "1" * 12, "AIza" + "e" * 35, "\n",
              "\r\n", " ", "é", "日本", "🙂", _BOM, "word", "-"]
    found = 0
    for _ in range(4000):
        text = "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 14)))
        for raw in (text.encode(), _BOM.encode() + text.encode()):
            decoded = raw.decode("utf-8-sig")
            assert may_hold(raw) == may_hold(decoded), raw
            if may_hold(decoded):
                assert _scan_raw(raw) == _scan(decoded), raw
                found += bool(_scan(decoded))
    assert found > 500
