"""The plain-tree fast path of ``yamlio.fast.load`` answers exactly as the general path.

``load`` builds documents that are plain trees (untagged mappings with string keys,
sequences, scalars) in one walk that also checks the limits, and sends everything else to
``_general`` (PyYAML's constructor after the limit checks). Whatever the document, the two
must agree: the same data (``repr``: 1, 1.0 and True differ) or the same error.
"""

from __future__ import annotations

import contextlib

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from promptops.pipeline.yamlio import fast, limits


def outcome(load: object, text: str) -> tuple[str, ...]:
    assert callable(load)
    try:
        return ("ok", repr(load(text)))
    except Exception as exc:  # the error itself is what is compared
        return ("error", type(exc).__name__, str(exc))


def same(text: str) -> tuple[str, ...]:
    got = outcome(fast.load, text)
    assert got == outcome(fast._general, text), text
    # given the bytes the text was decoded from (a BOM or not), libyaml reads those: the
    # same answer (PyYAML names the input "<byte string>" in its own messages, which the
    # loader never shows: it re-parses with ruamel.yaml to say what is wrong)
    for raw in (text.encode(), b"\xef\xbb\xbf" + text.encode()):
        bytes_got = outcome(lambda t, r=raw: fast.load(t, r), text)
        assert tuple(part.replace("<byte string>", "<unicode string>")
                     for part in bytes_got) == got, text
    return got


LONG = 2 * (limits.MAX_NODES // 4)  # characters: past the length that bounds the nodes


EDGES = [
    "", "---\n", "a: 1\n", "a: 1\na: 2\n", "1: a\n0x1: b\n", "true: a\n1: b\n",
    ".nan: a\n.nan: b\n", "? [a, b]\n: c\n", "? {a: b}\n: c\n", "a: &x {b: 1}\nc: *x\n",
    "a: &x s\nb: *x\n", "base: &b {x: 1}\nderived:\n  <<: *b\n  y: 2\n", "a: !!str [1]\n",
    "a: !!map x\n", "a: !!seq x\n", "a: !!set {x, y}\n", "a: !!omap [{x: 1}]\n",
    "a: !!binary aGk=\n", "a: 2001-12-14\n", "a: !custom x\n", "!!str 1: a\n",
    "!!value =: a\n", "a: <<\n", "a: [1, 1.5, .inf, -.inf, .nan, 0o17, 0x1F, 1_000]\n",
    "a: [yes, no, on, off, True, FALSE, ~, null, Null]\n", "a: 1e3\nb: +12\nc: -0\n",
    "- a\n- - b\n  - c\n- {d: e}\n", "text: |\n  **bold** and *em*\n", "a: *undefined\n",
    "a: [b\n", "a: 1\n---\nb: 2\n", "a: " + "1" * 5000 + "\n", "a: 0x" + "f" * 5000 + "\n",
    "[" * 101 + "]" * 101, "[" * 100 + "]" * 100, "[" * 99 + "]" * 99,
    "a: &a [x]\nb: &b [*a, *a, *a]\nc: [*b, *b, *b]\n", "a: &a [*a]\n",
    "k: v\n" + "".join(f"k{i}: [{', '.join(['x'] * 50)}]\n" for i in range(60)),
]


def test_edge_documents_agree() -> None:
    kinds = {same(text)[0] for text in EDGES}
    assert kinds == {"ok", "error"}  # both paths exercised


def test_a_plain_tree_takes_the_plain_path() -> None:
    loader = fast.FastLoader("a: [x, {b: c}]\n")
    root = loader.get_single_node()
    assert fast._plain(loader, root, aliases=False) == {"a": ["x", {"b": "c"}]}


def test_typed_scalars_are_built_without_the_generic_constructor(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Booleans, integers and floats are built by their constructors directly (issue 26
    session 21: ``construct_object``'s bookkeeping around them), with the same values and
    errors, explicitly tagged ones included."""
    text = "a: [true, False, 12, 0x1F, 1_000, 1.5, .inf, null, x, !!bool yes, !!int '7']\n"
    expected = fast._general(text)
    monkeypatch.setattr(fast.FastLoader, "construct_object", None)  # never called now
    loader = fast.FastLoader(text)
    got = fast._plain(loader, loader.get_single_node(), aliases=False)
    assert repr(got) == repr(expected)
    monkeypatch.undo()
    for odd in ("a: !!bool maybe\n", "a: !!int x\n", "a: !!float x\n", "a: 0x" + "f" * 5000):
        assert same(odd)[0] == "error", odd


def test_a_walk_looks_for_aliases_only_where_an_anchor_may_be(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``*`` without a ``&`` (Markdown's bold) is no alias: libyaml refuses an alias with
    no anchor, so no node can be met twice and the walk keeps no node ids (session 21)."""
    told: list[bool] = []
    real = fast._Walk

    def walk(loader: fast.FastLoader, *, aliases: bool) -> fast._Walk:
        told.append(aliases)
        return real(loader, aliases=aliases)

    monkeypatch.setattr(fast, "_Walk", walk)
    texts = ["text: '**bold** and *em*'\n", "a: &x [1]\nb: *x\n", "a: '&'\nb: '*'\n"]
    for text in texts:
        for source in (text, text.encode()):
            with contextlib.suppress(fast._NotPlain):  # (the alias: the general path's)
                fast._one_walk(source, None)
    assert told == [False, False, True, True, True, True]
    for text in [*texts, "a: *undefined\n", "a: &x [*x]\n"]:
        same(text)


def test_a_walk_without_aliases_counts_a_mappings_nodes_without_listing_them(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """No alias possible: a mapping's keys and values are counted, not flattened into a list
    for :meth:`fast._Walk.met` (session 21); the count, which the limit reads, is the same."""
    listed: list[int] = []
    met = fast._Walk.met
    monkeypatch.setattr(fast._Walk, "met", lambda self, nodes: (listed.append(len(nodes)),
                                                                met(self, nodes))[1])
    loader = fast.FastLoader("a: {b: c, d: [e, f]}\n")
    walk = fast._Walk(loader, aliases=False)
    root = loader.get_single_node()
    walk.met([root])
    assert walk.value(root, 1) == {"a": {"b": "c", "d": ["e", "f"]}}
    assert walk.count == 9 and listed == [1, 2]  # the root and the sequence only


def test_limits_hold_on_the_plain_path() -> None:
    deep = "[" * (limits.MAX_DEPTH + 1) + "]" * (limits.MAX_DEPTH + 1)
    assert same(deep)[1] == "LimitExceeded"
    laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [{', '.join([f'*{p}'] * 10)}]\n"
        for p, c in zip("abcdefg", "bcdefgh", strict=True))
    assert same(laughs)[1] == "LimitExceeded"


def test_long_documents_agree() -> None:
    """Past the length that bounds the nodes, a document that cannot hold too many (the
    counts say) takes the one-walk path too; others are counted, then composed."""
    prose = "Keep it short: - [a] {b}? 😀 " * (LONG // 25)
    texts = {
        "plain": f"text: |\n  {prose}\nname: x\n",
        "aliases": f"a: &a {{b: '{prose}'}}\nc: *a\n",
        "many": "k: [" + ", ".join(["x"] * (limits.MAX_NODES + 10)) + "]\n",
        "deep": "[" * (limits.MAX_DEPTH + 1) + "]" * (limits.MAX_DEPTH + 1) + " #" + prose,
        "tags": f"a: !!str '{prose}'\n",
        "bad": f"a: '{prose}\n",
    }
    assert {k: same(t)[:2] for k, t in texts.items()} == {
        "plain": ("ok", repr({"text": prose + "\n", "name": "x"})),
        "aliases": ("ok", same(texts["aliases"])[1]),
        "many": ("error", "LimitExceeded"),
        "deep": ("error", "LimitExceeded"),
        "tags": ("ok", repr({"a": prose})),
        "bad": ("error", "ScannerError")}
    assert all(len(t) > limits.MAX_NODES // 2 for k, t in texts.items() if k != "deep")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list(":-[{?,*ab 😀\n\ufeff")), max_size=60))
def test_the_counts_are_the_same_over_text_and_bytes(text: str) -> None:
    counts = (text.count(":") + text.count("-") + text.count("[") + text.count("{")
              + text.count("?"), text.count(","), "*" in text)
    expected = (counts[0] >= limits.MAX_DEPTH, 2 * (counts[0] + counts[1]) + 1 >
                limits.MAX_NODES, counts[2])
    assert limits.needs_check(text) == limits.needs_check(text.encode()) == expected


def test_the_resolver_tags_as_pyyaml_does() -> None:
    loader = fast.FastLoader("")
    for value in ["", "~", "null", "true", "False", "yes", "1", "-1", "0o7", "0x1f", "1_0",
                  "1.5", ".5", "+.inf", ".NaN", "1e3", "2001-12-14", "2001-12-14 21:59:43.10 -5",
                  "<<", "=", "a", "-", "--", "0b1", "1:2", "null x"]:
        for implicit in ((True, False), (False, True), (False, False)):
            assert loader.resolve(yaml.ScalarNode, value, implicit) == \
                yaml.resolver.BaseResolver.resolve(loader, yaml.ScalarNode, value, implicit)
    for kind in (yaml.SequenceNode, yaml.MappingNode):
        assert loader.resolve(kind, None, True) == \
            yaml.resolver.BaseResolver.resolve(loader, kind, None, True)


PIECES = st.sampled_from([
    "a", "b", "1", "1.0", "true", "~", "null", "''", '"x"', "*a", "&a ", "!!str ", "!!int ",
    "!x ", "<<", "[", "]", "{", "}", ", ", ": ", "- ", "? ", "\n", "\n  ", "\n- ", "|\n  ",
    ">-\n  ", "#c", "---", "...", "0x1F", ".inf", "2001-12-14", "**bold**", "{{ x }}", "\t",
])


@settings(max_examples=600, deadline=None)
@given(st.lists(PIECES, max_size=25).map("".join))
def test_any_document_agrees(text: str) -> None:
    same(text)


@settings(max_examples=150, deadline=None)
@given(st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner,
                                                                max_size=4),
    max_leaves=20))
def test_dumped_data_agrees(data: object) -> None:
    for flow in (True, False):
        assert same(yaml.safe_dump({"d": data}, default_flow_style=flow))[0] == "ok"


BYTES = st.sampled_from([b"\xef\xbb\xbf", b"\xef\xbb\xbf" * 2, b"\xff\xfe", b"\xfe\xff", b"\xff",
                         b"\xc0\x80",
                         b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe2\x82", b"\x00", b"\xc3\xa9",
                         b"\xf0\x9f\x98\x80", b"\x85", b"\xe2\x80\xa8", b"\t", b"\r\n"])


@settings(max_examples=600, deadline=None)
@given(st.lists(PIECES.map(str.encode) | BYTES, max_size=25).map(b"".join))
def test_a_file_read_from_its_bytes_is_the_file_decoded(raw: bytes) -> None:
    """Whatever libyaml reads whole from the bytes is valid UTF-8 and gives what the
    decoded text gives; the loader (``load_yaml``) then skips decoding it."""
    try:
        data = fast.load_bytes(raw)
    except Exception:  # the loader decodes, then parses the text: nothing to compare
        return
    text = raw.decode("utf-8-sig")  # raises if libyaml read what is not UTF-8
    given_both = outcome(lambda t: fast.load(t, raw), text)
    assert repr(data) == outcome(fast.load, text)[1] == given_both[1]


def test_the_loader_reads_bytes_as_it_read_the_decoded_text() -> None:
    """``load_yaml`` parses a file from its bytes and decodes its text only when read;
    bytes libyaml would read otherwise (UTF-16, a doubled BOM) or that are not UTF-8 are
    decoded first, as before: the same problems, at the same places."""
    from promptops.pipeline.yamlio.loader import YamlProblem, load_yaml

    def answer(raw: bytes) -> tuple[str, ...]:
        try:
            loaded = load_yaml("p.prompt.yaml", raw)
        except YamlProblem as exc:
            return ("problem", str(exc))
        return ("ok", repr(loaded.data), loaded.text)

    bom = b"\xef\xbb\xbf"
    assert answer(b"a: b\n") == ("ok", "{'a': 'b'}", "a: b\n")
    assert answer(bom + b"a: \xc3\xa9\n") == ("ok", "{'a': 'é'}", "a: é\n")
    # decoded, one BOM is dropped and libyaml drops the next as the stream's (as before)
    assert answer(bom * 2 + b"a\n") == ("ok", "'a'", "\ufeffa\n")
    assert answer(bom * 3 + b"a\n") == ("ok", "'a'", "\ufeff\ufeffa\n")
    assert answer(b"a: \xff\n") == ("problem", "p.prompt.yaml:1:4: file is not valid UTF-8")
    assert answer(b"\xff\xfea\x00\n\x00")[1].endswith("file is not valid UTF-8")
    assert answer(b"a: [b\n")[0] == "problem"
