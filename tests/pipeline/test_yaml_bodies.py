"""Long literal blocks read without libyaml (``yamlio.bodies``) give libyaml's data, or decline.

``bodies.cut`` reads a long ``key: |`` block itself and hands libyaml a skeleton with a
placeholder in its place; anything it cannot read exactly as libyaml does must decline
or be caught by ``put_back``, so a file loads to the same data (or the same problem) as
when libyaml reads it whole. Checked on generated blocks full of what libyaml treats
specially (indentation, empty lines, tabs, line breaks other than ``\\n``, refused
characters, chomping, the end of the file) with the length threshold lowered so that
every block is a candidate, and on the shapes the speed corpora have.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from promptops.pipeline.yamlio import bodies, loader
from promptops.pipeline.yamlio.loader import YamlProblem, load_yaml

PIECES = ["x", "word", " ", "  ", "\t", "#", ": |", "- ", "é", "…", "😀", "\r", "\x85",
          "\u2028", "\x07", "\x9f", "\ufeff", "\ufffe", "'", '"', "\\", "{{ a }}", "---"]
LINE = st.lists(st.sampled_from(PIECES), max_size=4).map("".join)


def _outcome(raw: bytes) -> object:
    try:
        return load_yaml("p.prompt.yaml", raw).data
    except YamlProblem as exc:
        return ("problem", exc.problem.line, exc.problem.col, exc.problem.message)
    except Exception as exc:  # a reader error ruamel.yaml raises: the same either way
        return (type(exc).__name__, str(exc))


def _both(raw: bytes) -> tuple[object, object]:
    """(the outcome with long blocks cut, the outcome with libyaml reading it all)."""
    with pytest.MonkeyPatch.context() as m:
        m.setattr(bodies, "MIN_BODY", 1)
        cut = _outcome(raw)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(bodies, "cut", lambda _raw: None)
        whole = _outcome(raw)
    return cut, whole


@settings(max_examples=100, deadline=None)
@given(head=st.sampled_from(["text: |", "text: |+", "text: |-", "- text: |", "  text: |"]),
       leading=st.integers(0, 2), indent=st.integers(1, 5),
       lines=st.lists(st.tuples(st.integers(-2, 3), LINE), min_size=1, max_size=8),
       tail=st.sampled_from(["", "\n", "\n\n", "\nnext: 1\n", "\n  - y\n", "\n   \n",
                             "\n\tz\n", "\n# c\n"]))
def test_a_cut_block_reads_as_libyaml_reads_it(head: str, leading: int, indent: int,
                                              lines: list[tuple[int, str]], tail: str) -> None:
    base = len(head) - len(head.lstrip(" -"))
    body = "\n".join(" " * max(0, base + indent + shift) + text for shift, text in lines)
    doc = f"name: n\n{head}\n" + "\n" * leading + body + tail
    cut, whole = _both(doc.encode("utf-8", "surrogatepass"))
    assert cut == whole


def test_the_speed_corpus_shape_is_cut_and_reads_the_same() -> None:
    """A 200 KB `text: |+` page after empty lines, then another message: cut (so the path
    is not dead code) and the same data."""
    page = "".join(f"    <p class=\"x\">line {i} … {{{{ a }}}}</p>\n" for i in range(6000))
    raw = ("messages:\n- role: user\n  text: |+\n\n\n" + page
           + "\n- role: assistant\n  text: ok\n").encode()
    assert bodies.cut(raw) is not None
    cut, whole = _both(raw)
    assert cut == whole and isinstance(cut, dict)


def test_a_header_inside_another_block_is_not_taken_for_one() -> None:
    inner = "  text: |\n" + "".join(f"      inner {i}\n" for i in range(50))
    doc = "description: |\n" + inner.replace("\n", "\n  ").rstrip(" ") + "name: n\n"
    cut, whole = _both(doc.encode())
    assert cut == whole and isinstance(cut, dict)


PAGE = "".join(f"  line {i} {{{{ a }}}}\n" for i in range(1000))


@pytest.mark.parametrize("after", [
    "y: 1  # see: |\nz: 2\n",  # a `: |` in a comment: not a header, its line kept
    "y: |\n  short\nz: 2\n",  # a header whose block is too short to cut
    "y: 'a: |'\nw: |\n" + PAGE + "z: 2\n",  # one not cut, then one cut again
    "y: |\n  short\n  \ufeff\r: |\n",  # the hypothesis example (libyaml refuses it)
])
def test_what_follows_a_cut_block_stays_in_the_skeleton(after: str) -> None:
    """After a cut block, a `: |` that is not cut (in a comment, a short block, a quoted
    value) keeps its line in the skeleton: it was dropped once, so `y` vanished silently
    from a valid file (or an invalid one loaded)."""
    raw = ("x: |\n" + PAGE + after).encode()
    assert bodies.cut(raw) is not None
    cut, whole = _both(raw)
    assert cut == whole


def _locations(data: object, at: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    """Every location in ``data`` (and one past a list's end, and a missing key)."""
    out: list[tuple[object, ...]] = [at, (*at, "missing")]
    if isinstance(data, dict):
        for key, value in data.items():
            out += _locations(value, (*at, key))
    elif isinstance(data, list):
        out.append((*at, len(data)))
        for i, value in enumerate(data):
            out += _locations(value, (*at, i))
    return out


def _positions(text: str, *, cut: bool) -> list[object]:
    """Every location's position, key position and block start, the long blocks cut
    (the threshold lowered) or the whole file composed by libyaml."""
    with pytest.MonkeyPatch.context() as m:
        if cut:
            m.setattr(bodies, "MIN_BODY", 1)
        else:
            m.setattr(bodies, "cut", lambda _raw, **_kw: None)
        file = load_yaml("p.prompt.yaml", text.encode("utf-8", "surrogatepass"))
        if cut:  # the path under test is taken (a file it declines proves nothing)
            assert loader._skeleton_marks(file.text, None) is not None
        return [(file.position(loc), file.position(loc, key=True), file.block_start(loc))
                for loc in _locations(file.data)]


PLAIN = st.lists(st.sampled_from(["x", " ", "  ", "#", ": |", "- ", "é", "😀", "'", '"', "{{ a }}",
                                  "---"]), max_size=4).map(lambda s: "w" + "".join(s))
MESSAGE = st.builds(
    lambda head, leading, indent, lines, after: (head, leading, indent, lines, after),
    st.sampled_from(["  text: |", "  text: |+", "  text: |-"]), st.integers(0, 2),
    st.integers(1, 4), st.lists(st.tuples(st.integers(0, 2), PLAIN), min_size=1, max_size=5),
    st.sampled_from(["", "  name: x\n", "  name: x\n  more:\n    - a\n    - 'b'\n"]))


@settings(max_examples=100, deadline=None)
@given(messages=st.lists(MESSAGE, min_size=1, max_size=3),
       tail=st.sampled_from(["", "arguments:\n- name: a\n", "x: 1\n\n\ny: [1, {z: 2}]\n"]))
def test_positions_from_the_skeleton_are_the_whole_files(
        messages: list[tuple[str, int, int, list[tuple[int, str]], str]], tail: str) -> None:
    """Every node keeps its line and column when the file's long blocks are cut
    (``_mark_tree`` composes the skeleton with the blocks' lines kept empty): the same
    position, key position and block start at every location as libyaml's whole file."""
    doc = "name: n\nmessages:\n"
    for head, leading, indent, lines, after in messages:
        body = "\n".join(" " * (2 + indent + shift * (i > 0)) + text
                          for i, (shift, text) in enumerate(lines))
        doc += f"- role: user\n{head}\n" + "\n" * leading + body + "\n" + after
    doc += tail
    assert _positions(doc, cut=True) == _positions(doc, cut=False)


def test_the_speed_corpus_shape_is_placed_from_its_skeleton() -> None:
    page = "".join(f"    <p class=\"x\">line {i} … {{{{ a }}}}</p>\n" for i in range(3000))
    text = ("name: n\nmessages:\n- role: user\n  text: |+\n\n\n" + page
            + "\n- role: assistant\n  text: |\n" + page + "arguments:\n- name: a\n")
    assert loader._skeleton_marks(text, None) is not None  # no threshold lowered
    assert _positions(text, cut=True) == _positions(text, cut=False)


@pytest.mark.parametrize("text", [
    "d: >\n  text: |\n    inner\n    more\ne: 1\n",  # the header inside a folded block
    "d:\n  text: |\n    inner\n  again: *x\n",  # a skeleton libyaml refuses
    "d: &x\n  text: |\n    inner\ne: *x\n",  # the block read twice (an alias)
])
def test_a_skeleton_not_read_as_the_file_is_declined(text: str) -> None:
    """Positions come from the whole file when the skeleton reads a placeholder as part of
    another value, not at all, or twice; and they are the whole file's."""
    with pytest.MonkeyPatch.context() as m:
        m.setattr(bodies, "MIN_BODY", 1)
        assert bodies.cut(text.encode(), lines=True) is not None
        assert loader._skeleton_marks(text, None) is None
    file = load_yaml("p.prompt.yaml", text.encode()) if "again" not in text else None
    if file is not None:
        with pytest.MonkeyPatch.context() as m:
            m.setattr(bodies, "MIN_BODY", 1)
            got = [file.position(loc) for loc in _locations(file.data)]
        assert got == [file.position(loc) for loc in _locations(file.data)]


@pytest.mark.parametrize("odd", ["\r", "\x85", "\u2028", "\u2029", "\ufffe", "\x07"])
def test_a_block_libyaml_reads_otherwise_is_not_cut_for_positions_either(odd: str) -> None:
    """Line breaks other than ``\\n`` (libyaml counts them as lines) and characters its
    reader refuses: the positions' cut (which reads no value) declines as the data's does."""
    text = "text: |\n" + "".join(f"  line {i}\n" for i in range(2000)) + f"  x{odd}y\nz: 1\n"
    assert bodies.cut(text.encode()) is None
    assert bodies.cut(text.encode(), lines=True) is None
    assert bodies.cut(text.replace(odd, "").encode(), lines=True) is not None


@settings(max_examples=150, deadline=None)
@given(blocks=st.lists(st.tuples(
           st.sampled_from(["text: |", "text: |+", "text: |-", "- text: |", "y: 'a: |'\nw: |"]),
           st.integers(0, 2), st.integers(1, 3),
           st.lists(st.tuples(st.integers(-1, 2), LINE), min_size=1, max_size=6)),
       min_size=1, max_size=3))
def test_the_positions_skeleton_from_the_datas_blocks_is_the_cut_for_positions(
        blocks: list[tuple[str, int, int, list[tuple[int, str]]]]) -> None:
    """Placing a finding builds the skeleton from the blocks validation's parse cut
    (``bodies.skeleton``) instead of finding them again: the same skeleton and blocks as
    ``cut(lines=True)``, on files where some blocks are refused (tabs, odd line breaks,
    refused characters) and others cut, and the same refusal of the whole file."""
    doc = "name: n\n"
    for head, leading, indent, lines in blocks:
        base = len(head.rsplit("\n", 1)[-1]) - len(head.rsplit("\n", 1)[-1].lstrip(" -"))
        doc += f"{head}\n" + "\n" * leading + "\n".join(
            " " * max(0, base + indent + shift) + text for shift, text in lines) + "\n"
    raw = doc.encode()
    with pytest.MonkeyPatch.context() as m:
        m.setattr(bodies, "MIN_BODY", 1)
        read, placed = bodies.cut(raw), bodies.cut(raw, lines=True)
        if read is None:
            assert placed is None
        else:
            assert bodies.skeleton(raw, read[2], lines=True) == placed


def test_a_file_parsed_from_its_bytes_keeps_the_blocks_it_cut() -> None:
    """The blocks reach the loaded file (else placing a finding cuts the file again)."""
    raw = ("messages:\n- role: user\n  text: |\n" + PAGE.replace("  ", "    ")
           + "- role: user\n  text: |-\n" + PAGE.replace("  ", "    ") + "x: 1\n").encode()
    file = load_yaml("p.prompt.yaml", raw)
    cut = bodies.cut(raw)
    assert cut is not None and len(cut[2]) == 2 and file._blocks == cut[2]
    assert file.block_start(("messages", 1, "text")) == (1006, 5, True)  # 3 + 1,000 + 3


def test_a_shed_file_sent_to_another_process_parses_its_data_again() -> None:
    """A shed file pickled (a forked half's memo, the build's and lint's) is still shed
    where it arrives: its data is parsed again, not the marker it held."""
    import pickle

    raw = b"name: n\nmessages:\n- role: user\n  text: hi\n"
    file = load_yaml("p.prompt.yaml", raw)
    data = file.data
    file.shed()
    arrived = pickle.loads(pickle.dumps(file, protocol=pickle.HIGHEST_PROTOCOL))
    assert arrived.data == data


C1_PIECES = [b"a", b"\xc2", b"\x80", b"\x9f", b"\xa0", b"\xc2\xa0", b"\xc2\x85", b"\xc2\xa9"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(C1_PIECES), max_size=40).map(b"".join), st.booleans())
def test_the_c1_check_finds_what_the_expression_finds(text: bytes, few: bool) -> None:
    """``bodies.c1`` looks at each ``\\xc2`` where a text holds few (issue 26 session 20),
    and lets the expression search it otherwise: either way, its answer."""
    suspect = text.translate(None, bodies._NOT_SUSPECT)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(bodies, "C1_FINDS", 64 if few else 0)
        assert bodies.c1(text, suspect) == (bodies._C1.search(text) is not None)
