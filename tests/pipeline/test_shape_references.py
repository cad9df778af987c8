"""The references of a template made from its shape are those Jinja's own tree gives.

:meth:`promptops.pipeline.astshapes.AstShapes.references` answers what a template
includes, imports and extends from its shape's marked tree, walked once per shape, with
the template's own values put where the markers are, instead of walking each template's
tree. Here random layouts of tags (plain names, names with escapes, computed names,
lists, conditionals, imports) are filled with random texts and names, several times each
so that shapes are shared, and every template's references through a
:class:`~promptops.pipeline.templates.TemplateIndex` must be those of Jinja's own parse.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jinja2 import TemplateSyntaxError

from promptops.pipeline.memo import FileMemo
from promptops.pipeline.templates import TemplateIndex, references_in
from promptops.sandbox.nesting import parse

TAGS = [
    "{{ x }}", "{% if a %}", "{% endif %}", "{% for i in [1] %}", "{% endfor %}",
    "{% include \"@\" %}", "{% include '@' ignore missing %}", "{% include \"@\" with context %}",
    "{% include \"@\" ~ x %}", "{% include [\"@\", 'b.j2'] %}", "{% include x %}",
    "{% include '@' if a else 'c.j2' %}", "{% import \"@\" as m %}",
    "{% from '@' import f %}", "{% extends \"@\" %}", "{% include \"a\\\\tb.j2\" %}",
    "{% include\n\"@\" %}", "{# include \"@\" #}", "{% raw %}{% include '@' %}{% endraw %}",
    "{%- include \"@\" -%}", "{% include 'fixed.j2' %}",
]
TEXT = st.lists(st.sampled_from(["a", " ", "\n", "include ", "x"]), max_size=5).map("".join)
NAME = st.sampled_from(["p.j2", "partials/q.j2", "r s.j2", "t\\u.j2", "é.j2"])
LAYOUT = st.lists(st.one_of(st.just(None), st.sampled_from(TAGS)), min_size=1, max_size=8)


def _fill(layout: list[str | None], texts: list[str], names: list[str]) -> str:
    return "".join(texts[i % len(texts)] if piece is None
                   else piece.replace("@", names[i % len(names)])
                   for i, piece in enumerate(layout))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(LAYOUT, st.lists(st.tuples(st.lists(TEXT, min_size=1, max_size=3),
                                  st.lists(NAME, min_size=1, max_size=3)),
                        min_size=2, max_size=5), st.booleans())
def test_references_from_a_shape_are_jinjas(layout: list[str | None],
                                           fillings: list[tuple[list[str], list[str]]],
                                           keep: bool) -> None:
    index = TemplateIndex(FileMemo(), keep_asts=keep)
    for texts, names in [*fillings, *fillings]:
        source = _fill(layout, texts, names)
        try:
            want = references_in(parse(index.env, source))
        except TemplateSyntaxError:
            continue
        index.memo = FileMemo()  # the memo would answer the second round unasked
        assert index.references(source) == want, source


def test_a_shared_shape_is_walked_once() -> None:
    index = TemplateIndex(FileMemo())
    for i in range(4):
        source = f'{{% include "p{i}.j2" %}}\n{{% import "m{i}.j2" as m %}}Case {i}\n'
        assert index.references(source) == ((f"p{i}.j2", 1), (f"m{i}.j2", 2))
    assert len(index._shapes._refs) == 1


def test_a_known_layout_gives_its_references_without_a_tree(monkeypatch: object) -> None:
    """An index that keeps no tree (review/warm.py's forked half) answers a template of
    a layout seen twice from the layout's marked tree alone: no tree of its own made,
    literals and names its own."""
    import pytest

    from promptops.pipeline import astshapes

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    index, kept = TemplateIndex(FileMemo()), TemplateIndex(FileMemo(), keep_asts=True)

    def source(i: int) -> str:
        return (f'{{% set n = {i} %}}{{% include "p{i}.j2" %}}\n'
                f'{{% if n == "m{i}" %}}{i}{{% endif %}}')

    for i in range(2):  # the first two of a layout are parsed (astshapes' docstring)
        assert index.references(source(i)) == kept.references(source(i)) == ((f"p{i}.j2", 1),)

    made: list[object] = []
    tree = astshapes._tree

    def counted(*args: object) -> object:
        made.append(args)
        return tree(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(astshapes, "_tree", counted)
    for i in range(2, 5):
        assert index.references(source(i)) == ((f"p{i}.j2", 1),)
    assert not made
    assert kept.references(source(9)) == (("p9.j2", 1),)
    assert len(made) == 1  # a tree kept is still made


def test_a_layout_not_known_is_scanned_once(monkeypatch: object) -> None:
    """A template whose layout the index does not know yet, or that the scan refuses, is
    scanned once: the parse after ``known_references``' miss takes that scan (each
    template of 10,000 distinct prompts was scanned twice, session 20), and answers as
    Jinja does."""
    import pytest

    from promptops.pipeline import astshapes

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    scans: list[str] = []
    scan = astshapes.literal_shape

    def counted(env: object, text: str) -> object:
        scans.append(text)
        return scan(env, text)  # type: ignore[arg-type]

    monkeypatch.setattr(astshapes, "literal_shape", counted)
    index = TemplateIndex(FileMemo())
    sources = ['{% include "p.j2" %}\nCase 1\n', '{% include "a\\\\tb.j2" %}{{ x }}\n',
               '{{ "\\x00" }}{% include "q.j2" %}', "{% if a %}\r\n{% endif %}"]
    for source in sources:
        scans.clear()
        assert index.references(source) == references_in(parse(index.env, source))
        assert len(scans) == 1, source
