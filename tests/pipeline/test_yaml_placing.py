"""Positions read off libyaml's events are the composed graph's, or declined.

``placing.placed`` walks the parser's events down to one value and stops there, where
``loader._mark_tree`` composed the whole file (issue 26 item 1, session 21: placing a
finding in each of 5,000 real prompts was a fifth of the lint child of a ``diff``). Every
location of generated documents (missing keys, items past the end, steps deeper than a
scalar, anchors, aliases, merge keys, complex keys, tags, every scalar style) is placed
as the graph places it, or declined.
"""

from __future__ import annotations

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from promptops.pipeline.yamlio import fast, loader, placing

_MERGED = ("base: &b\n  role: user\n  text: from base\nother: &o {text: other}\n"
           "messages:\n- <<: *b\n  text: own\n- <<: [*o, *b]\n- !!merge <<: *b\n"
           "- '<<': quoted\n  role: x\n- {? [a]: 1, role: y}\n- *b\n- !!str text: |\n"
           "    block\n  *b : aliased key\n  role: >-\n    folded\n"
           "- !!merge text: {text: inline, role: r}\naliased: *o\n")
_PROMPT = ("description: d\narguments:\n- name: topic\n  required: true\nmessages:\n"
           "- role: user\n  text: 'Copy 3 of this. About {{ topic }}.'\n- role: user\n"
           "  text: |-\n    line one\n    {{ topic }}\n")


def _locations(graph: loader._Marks, node: object, at: tuple[str | int, ...] = (),
               depth: int = 0) -> list[tuple[str | int, ...]]:
    """Every location of the graph under ``node`` (its keys as the graph reads them, merged
    ones too), and one missing key, one merge key, one item past the end and one step too
    deep under each."""
    out = [at]
    if depth > 6:
        return out
    if isinstance(node, yaml.MappingNode):
        for name, (_, value) in graph.pairs(node).items():
            out += _locations(graph, value, (*at, name), depth + 1)
        out += [(*at, "missing"), (*at, "<<"), (*at, 0)]
    elif isinstance(node, yaml.SequenceNode):
        for i, value in enumerate(node.value):
            out += _locations(graph, value, (*at, i), depth + 1)
        out += [(*at, len(node.value)), (*at, "0")]
    else:
        out.append((*at, 0, "deeper"))
    return out


def _agree(text: str) -> int:
    """Check every location of ``text`` against the composed graph; how many were placed."""
    source = text.encode()
    graph = loader._Marks(loader._PositionLoader(source).get_single_node())
    placed = 0
    for loc in _locations(graph, graph.root):
        for key in (False, True):
            noted: placing.Noted = {}
            got = placing.placed(source, loc, key=key, noted=noted)
            for (spot, at_key), answer in noted.items():  # what the walk read past
                line, col, node = graph.walk(spot, key=at_key)
                assert answer == (line, col, loader._style(node)), (loc, spot, at_key)
            if got is None:
                continue
            placed += 1
            line, col, node = graph.walk(loc, key=key)
            assert got == (line, col, loader._style(node)), (loc, key)
    return placed


def test_anchors_aliases_and_merges_are_placed_as_the_graph_places_them_or_declined() -> None:
    assert _agree(_MERGED) > 10
    # an alias on the way, a merged key, a key an alias gives: the graph answers those
    assert placing.placed(_MERGED.encode(), ("messages", 5, "role"), key=False) is None
    assert placing.placed(_MERGED.encode(), ("messages", 1, "role"), key=False) is None
    assert placing.placed(_MERGED.encode(), ("messages", 6, "role"), key=False) is None
    assert placing.placed(_MERGED.encode(), ("messages", 7, "text"), key=False) is None
    assert placing.placed(_MERGED.encode(), ("aliased", "text"), key=False) is None


def test_a_prompt_is_placed_without_composing_it(monkeypatch: object) -> None:
    import pytest

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    file = loader.load_yaml("p.prompt.yaml", _PROMPT.encode())
    want = [loader.LoadedFile("p.prompt.yaml", _PROMPT, None).block_start(spot)
            for spot in (("messages", 0, "text"), ("messages", 1, "text"))]
    composed: list[str] = []
    real = loader._mark_tree

    def counting(*args: object, **kwargs: object) -> object:
        composed.append("yes")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(loader, "_mark_tree", counting)
    assert file.block_start(("messages", 0, "text")) == want[0] == (7, 9, False)
    assert file.block_start(("messages", 1, "text")) == want[1] == (10, 5, True)
    assert file.position(("arguments",), key=True) == (2, 1)
    assert composed == []
    for _ in range(loader.EVENT_WALKS):  # a file asked many times is composed once
        file.position(("description",))
    assert composed == ["yes"]


def test_a_message_read_past_is_placed_without_walking_again(monkeypatch: object) -> None:
    """A walk to a prompt's second message notes where its first message's values start:
    a finding there next is placed without reading the file again."""
    import pytest

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    text = _PROMPT.replace("- role: user\n  text: 'Copy", "- role: user\n  '<<': x\n  text: 'Copy")
    file = loader.load_yaml("p.prompt.yaml", text.encode())
    walks: list[object] = []
    real = placing.placed

    def counting(*args: object, **kwargs: object) -> object:
        walks.append(args[1])
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(placing, "placed", counting)
    assert file.block_start(("messages", 1, "text")) == (11, 5, True)
    assert file.block_start(("messages", 0, "text")) == (8, 9, False)
    assert file.position(("messages", 0, "role"), key=True) == (6, 3)
    assert walks == [("messages", 1, "text")]
    assert file.position(("messages", 0, "<<")) == (7, 9)  # never noted: walked
    assert len(walks) == 2


def test_a_file_the_fast_path_did_not_read_is_composed() -> None:
    """Only libyaml's whole read of a file vouches that no error comes after the value."""
    assert loader.LoadedFile("p.yaml", _PROMPT, None)._events == 0
    assert loader.load_yaml("p.yaml", _PROMPT.encode())._events == loader.EVENT_WALKS


_SCALARS = st.one_of(
    st.text(alphabet="ab :#-'\"\n|>&*!{}[],", max_size=12), st.integers(-5, 5),
    st.booleans(), st.none())
_KEYS = st.one_of(st.text(alphabet="ab<:- '", min_size=0, max_size=4), st.integers(0, 3))
_DATA = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(_KEYS, inner, max_size=4)),
    max_leaves=20)
_STYLES = st.sampled_from([None, "|", ">", "'", '"'])


@settings(max_examples=300, deadline=None)
@given(_DATA, st.booleans(), _STYLES)
def test_generated_documents_are_placed_as_the_graph_places_them(
        data: object, flow: bool, style: str | None) -> None:
    text = yaml.dump(data, default_flow_style=flow, default_style=style, allow_unicode=True)
    try:
        fast.load(text, text.encode())
    except Exception:
        return  # only what libyaml reads whole (the caller's condition)
    _agree(text)


def test_long_documents_are_read_in_pieces_and_placed_as_the_graph_places_them() -> None:
    """libyaml is handed the bytes a piece at a time (``placing._Pieces``): every location of
    documents with multibyte characters and keys astride the pieces' edges is still placed
    as the graph places it."""
    for width in (1, 2, 3, 4):
        char = {1: "a", 2: "é", 3: "€", 4: "𝄞"}[width]
        for pad in (0, 5):
            items = "".join(f"- role: {char * (pad + k * 37)}\n  text: |\n    {char * 300}\n"
                            f"    {{{{ t{k} }}}}\n" for k in range(6))
            text = f"description: {char * (509 - pad)}\nmessages:\n{items}tail: end\n"
            assert _agree(text) > 30


def test_a_walk_reads_the_file_only_as_far_as_the_value(monkeypatch: object) -> None:
    """A value near the start of a long file is placed after reading its first piece, not
    the first 16 KB libyaml's reader decodes when handed all the bytes at once."""
    import pytest

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    given: list[int] = []
    read = placing._Pieces.read

    def counting(self: placing._Pieces, size: int) -> bytes:
        got = read(self, size)
        given.append(len(got))
        return got

    monkeypatch.setattr(placing._Pieces, "read", counting)
    source = (_PROMPT + "extra: |\n" + "  long line of the tail\n" * 5000).encode()
    assert placing.placed(source, ("messages", 0, "text"), key=False) == (6, 8, "'")
    assert sum(given) <= 2 * placing._FIRST_PIECE < len(source)
