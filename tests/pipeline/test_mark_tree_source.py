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
    real = loader._PositionLoader

    class Recording(real):  # type: ignore[misc, valid-type]
        def __init__(self, stream: object) -> None:
            given.append(type(stream))
            super().__init__(stream)

    monkeypatch.setattr(loader, "_PositionLoader", Recording)
    by_text = loader.LoadedFile("p.yaml", _FILE, None)
    spots = [("description",), ("messages", 0, "text"), ("messages", 1, "text"),
             ("arguments", 0, "name")]
    got = [(by_text.position(s), by_text.position(s, key=True), by_text.block_start(s))
           for s in spots]
    assert given == [bytes]
    monkeypatch.setattr(loader, "_PositionLoader", real)
    by_bytes = loader.LoadedFile("p.yaml", None, None, raw=_FILE.encode())
    assert got == [(by_bytes.position(s), by_bytes.position(s, key=True),
                    by_bytes.block_start(s)) for s in spots]
    assert got[1][2] == (7, 5, True)


def test_a_text_with_a_bom_is_composed_as_a_text() -> None:
    file = loader.LoadedFile("p.yaml", "\ufeff" + _FILE, None)
    assert file.block_start(("messages", 0, "text")) == (7, 5, True)


_MERGED = ("base: &b\n  role: user\n  text: from base\nother: &o {text: other}\n"
           "messages:\n- <<: *b\n  text: own\n- <<: [*o, *b]\n- !!merge <<: *b\n"
           "- '<<': quoted\n  role: x\n- {? [a]: 1, role: y}\n")


def test_merge_keys_are_read_as_the_fast_loaders_tags_read_them() -> None:
    """The positions loader's tags are ``slice``s (no Python resolve per node): a merge
    key is still a plain or ``!!merge`` ``<<``, a quoted one a key of its own."""
    spots = [("messages", i, key) for i in range(5) for key in ("text", "role", "<<")]
    graph = loader._Marks(fast.FastLoader(_MERGED).get_single_node())
    file = loader.LoadedFile("p.yaml", _MERGED, None)
    for spot in spots:
        for key in (False, True):
            assert file._walk(spot, key=key)[:2] == graph.walk(spot, key=key)[:2], spot
    assert file.position(("messages", 1, "text")) == (4, 18)  # merged from *o
    assert file.position(("messages", 2, "role")) == (2, 9)  # !!merge: base's
    assert file.position(("messages", 3, "<<")) == (10, 9)  # a quoted key
