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

from promptops.pipeline.yamlio import bodies
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
