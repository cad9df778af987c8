"""Positions of a file known by its text alone are composed from one UTF-8 encoding.

``loader._mark_tree`` encodes the text once for the skeleton's cut and gives libyaml
those bytes for the whole file too (CParser encoded a str again: issue 26, session 20);
the positions are the same as from the file's bytes or its text.
"""

from __future__ import annotations

import pytest

from promptops.pipeline.yamlio import fast, loader

_FILE = ("description: caf\u00e9 \u2019quoted\u2019\narguments:\n- name: topic\n"
         "messages:\n- role: user\n  text: |-\n    Caf\u00e9 \u2014 {{ topic }}\n"
         "    second line\n- role: assistant\n  text: 'x \u00e9'\n")


def test_a_text_alone_is_composed_from_its_utf8(monkeypatch: pytest.MonkeyPatch) -> None:
    given: list[type] = []
    real = fast.FastLoader

    class Recording(real):  # type: ignore[misc, valid-type]
        def __init__(self, stream: object) -> None:
            given.append(type(stream))
            super().__init__(stream)

    monkeypatch.setattr(fast, "FastLoader", Recording)
    by_text = loader.LoadedFile("p.yaml", _FILE, None)
    spots = [("description",), ("messages", 0, "text"), ("messages", 1, "text"),
             ("arguments", 0, "name")]
    got = [(by_text.position(s), by_text.position(s, key=True), by_text.block_start(s))
           for s in spots]
    assert given == [bytes]
    monkeypatch.setattr(fast, "FastLoader", real)
    by_bytes = loader.LoadedFile("p.yaml", None, None, raw=_FILE.encode())
    assert got == [(by_bytes.position(s), by_bytes.position(s, key=True),
                    by_bytes.block_start(s)) for s in spots]
    assert got[1][2] == (7, 5, True)


def test_a_text_with_a_bom_is_composed_as_a_text() -> None:
    file = loader.LoadedFile("p.yaml", "\ufeff" + _FILE, None)
    assert file.block_start(("messages", 0, "text")) == (7, 5, True)
