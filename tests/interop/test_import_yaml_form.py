"""The YAML `promptops import` writes reads back exactly, in the form a person writes.

Block literals for multi-line text (trailing spaces on a line, tabs, leading blank lines
included), no indentation indicator where YAML does not need one, and a double-quoted
scalar only where YAML has no other exact form ("\\r", NEL, the Unicode line separators,
control characters). Read back by both package loaders (libyaml's fast path, ruamel.yaml's
fallback), any text is what was written.
"""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from promptops.interop.package import dump
from promptops.pipeline.yamlio import fast

PIECES = st.sampled_from([" ", "  ", "\t", "\n", "\n\n", "a", "b ", " x", "#", ": ", "- ", "|",
                          "'", '"', "é", "\u00a0", "{{ x }}", "---", "...", "\r", "\x85",
                          "\u2028", "\ufeff", "\x1b", "\n\t", "\t\n", " \n", "\n  "])
TEXT = st.lists(PIECES, min_size=1, max_size=14).map("".join) | st.text(max_size=40)


@settings(max_examples=400, deadline=None)
@given(TEXT)
@example("0E0")  # YAML 1.2 reads it as a float; PyYAML's 1.1 rules left it unquoted
@example("1e3")
def test_any_text_reads_back_exactly(text: str) -> None:
    written = dump({"messages": [{"role": "user", "text": text}]})
    assert fast.load(written)["messages"][0]["text"] == text
    assert YAML(typ="safe").load(written)["messages"][0]["text"] == text


def test_the_form_is_what_a_person_writes() -> None:
    assert dump({"text": "\n# Title\n\nBody"}) == "text: |-\n\n  # Title\n\n  Body\n"
    assert dump({"text": "line with a trailing space \nnext\n"}) == \
        "text: |\n  line with a trailing space \n  next\n"
    assert dump({"text": "  indented\nx"}).startswith("text: |2-\n")
    assert dump({"text": "a\r\nb"}) == 'text: "a\\r\\nb"\n'
