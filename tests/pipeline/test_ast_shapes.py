"""A template's tree from its shape's tree is the tree Jinja parses.

:mod:`promptops.pipeline.astshapes` parses the first template of a shape, and gives every
later one a copy of the shape's marked tree with its own texts and template names put in.
Here every tree is compared with Jinja's own parse (under the nesting guard, as
:func:`promptops.sandbox.nesting.parse` parses), node type, fields and line numbers, for
templates that share a shape and for ones that do not; and a template that does not parse
fails exactly as Jinja fails, first of its shape or not.
"""

from __future__ import annotations

import pytest
from helpers.templates import dump_tree, template_files
from jinja2 import TemplateSyntaxError, nodes

from promptops.pipeline.astshapes import AstShapes
from promptops.pipeline.templates import TemplateIndex
from promptops.sandbox.nesting import parse

# "@1", "@2" ... are filled with each row of VALUES: one shape, several templates
SHAPED = [
    "Write about {{ topic }} for case @1.\n",
    '{% include "partials/@1.j2" %}\nWrite about {{ topic }} for case @2.\n',
    '{% include "@1" ignore missing %}{% include "@2" with context %}@3',
    '{% from "@1" import hi %}{{ hi(who) }} @2',
    '{% import "@1" as m %}{{ m.hi(who) }}@2{% include \'@3\' %}',
    '{% extends "@1" %}{% block body %}@2 {{ x }}{% endblock %}',
    "@1 {{ x }}{% if a %}@2{% else %}@3{% endif %}\n{% for i in [1, 2] %} - {{ i }}\n"
    "{% endfor %}",
    "  {% if a %}\n  @1\n  {% endif %}\n",
    "{%- if a -%}\n  @1  \n{%- endif -%}",
    "{% set y %}@1{% endset %}{{ y|upper }}",
    "{% macro m(a) %}<{{ a }}>@1{% endmacro %}{{ m('q') }}@2{{ 'const' }}@3",
    "{% filter upper %}@1{% endfilter %}",
    "{% raw %}{{ x }} @1{% endraw %} @2",
    "{# a comment #}@1 {{ 'a' ~ 'b' }} {{ 1 + 2 }}\n",
    "{% for p in ['intro', 'body'] %}{{ p }} of {{ topic }} @1\n{% endfor %}",
    '{% include "partials/" ~ kind ~ "@1" %}@2',
    '{% include "a.j2" if x else "@1" %}@2',
    '{% include ["@1", "b.j2"] %}',
    '{% include "@1" "b.j2" %}',
    "{% if a %}{% include '@1' %}{% endif %}{% include '@1' %}@2",
    "{{ x | no_such_filter }}@1",  # parses: the filter is looked up when compiling
    "{% block a %}@1{% endblock %}{% block a %}{% endblock %}",
]
VALUES = [
    ("one", "two", "three"),
    ("Uno", "Dos", "Tres"),
    ("x", "y", "z"),  # the same names twice in a row: still filled in order
    ("same", "same", "same"),
    ("a b c", "é — 你好", "' \" %s {}"),
]
BROKEN = [
    "{% if x %}@1 never closed",
    "{% endfor %}@1",
    "{{ (((((((((((((((((((((((((x)))))))))))))))))))))))))}}@1",
    "@1 {% include %}",
    "@1 {{ 'unclosed }}",
]




def _fill(template: str, row: tuple[str, ...]) -> str:
    for n, value in enumerate(row, 1):
        template = template.replace(f"@{n}", value)
    return template


@pytest.mark.parametrize("template", SHAPED)
def test_every_template_of_a_shape_gets_jinjas_tree(template: str) -> None:
    env = TemplateIndex().env
    shapes = AstShapes()
    for row in [*VALUES, *VALUES]:  # the second round: every tree from the shape's copy
        source = _fill(template, row)
        try:
            want = parse(env, source)
        except TemplateSyntaxError as exc:  # a quote of VALUES inside a quoted name
            with pytest.raises(TemplateSyntaxError) as raised:
                shapes.parse(env, source)
            assert (raised.value.message, raised.value.lineno) == (exc.message, exc.lineno)
            continue
        got = shapes.parse(env, source)
        assert dump_tree(got) == dump_tree(want), source
        assert got == want
        assert got.environment is env
        assert all(n.environment is env for n in got.find_all(nodes.Node))


def test_a_shape_seen_twice_is_shared() -> None:
    """The copies above are copies: a template of a known shape is not parsed again."""
    env = TemplateIndex().env
    shapes = AstShapes()
    first = shapes.parse(env, "{% include 'a.j2' %}Case 1 {{ x }}")
    second = shapes.parse(env, "{% include 'b.j2' %}Case 2 {{ x }}")
    marked = [t for t in shapes._marked.values() if t is not None]
    assert len(marked) == 1 and marked[0] is not second and marked[0] is not first
    include = next(second.find_all(nodes.Include))
    assert isinstance(include.template, nodes.Const) and include.template.value == "b.j2"
    third = shapes.parse(env, "{% include 'c.j2' %}Case 3 {{ x }}")
    assert next(third.find_all(nodes.Include)) is not include  # nothing shared between trees
    assert dump_tree(third) == dump_tree(parse(env, "{% include 'c.j2' %}Case 3 {{ x }}"))


def test_the_tests_templates_parse_as_jinja_parses_them_first_and_again() -> None:
    env = TemplateIndex().env
    shapes = AstShapes()
    sources = template_files()
    assert sources
    for _ in range(2):
        for source in sources:
            try:
                want = parse(env, source)
            except TemplateSyntaxError as exc:
                with pytest.raises(TemplateSyntaxError) as got:
                    shapes.parse(env, source)
                assert (got.value.message, got.value.lineno) == (exc.message, exc.lineno)
                continue
            assert dump_tree(shapes.parse(env, source)) == dump_tree(want)


@pytest.mark.parametrize("template", BROKEN)
def test_what_does_not_parse_fails_as_jinja_fails(template: str) -> None:
    env = TemplateIndex().env
    shapes = AstShapes()
    for row in [*VALUES, *VALUES]:
        source = _fill(template, row)
        with pytest.raises(TemplateSyntaxError) as want:
            parse(env, source)
        with pytest.raises(TemplateSyntaxError) as got:
            shapes.parse(env, source)
        assert (got.value.message, got.value.lineno) == (want.value.message, want.value.lineno)


def test_a_nul_in_a_text_is_parsed_as_it_is() -> None:
    env = TemplateIndex().env
    shapes = AstShapes()
    for source in ["a\x00b {{ x }}", "a\x001\x00 {{ x }}", "a\\x001\\x00 {{ x }}"] * 2:
        assert dump_tree(shapes.parse(env, source)) == dump_tree(parse(env, source))


def test_a_literal_over_several_lines_keeps_its_layout_in_the_key() -> None:
    """Two sources whose tags differ only in where a string literal's line breaks are
    (``"a\\nb" ~ foo ~ "c"`` and ``"ab" ~ foo ~ "c\\n"``) end on the same line, but ``foo``
    is on another: literal_shape's key must tell them apart, or the second gets the first
    one's tree, its lines one off (session 20: a lint finding reported on the wrong line)."""
    env = TemplateIndex().env
    shapes = AstShapes()
    sources = ['{{ "a\nb" ~ foo ~ "c" }}', '{{ "d\ne" ~ foo ~ "f" }}', '{{ "ab" ~ foo ~ "c\n" }}',
               '{{ "g\nh" ~ foo ~ "i" }}']
    for source in sources:
        assert dump_tree(shapes.parse(env, source)) == dump_tree(parse(env, source)), source


def test_a_tree_with_markers_for_literals_is_jinjas_but_for_them() -> None:
    """literal_marked: each literal literal_shape finds is its place's marker, in a tree
    Jinja's otherwise (lint reads where a shape's literals are off it)."""
    from promptops.pipeline.astshapes import literal_marked
    from promptops.pipeline.textshape import literal_shape

    env = TemplateIndex().env
    source = ('{% set label = "case " ~ 7 %}{{ args["x"] }}\n{% for i in range(3) %}'
              '{{ i }}{% endfor %}{% include "a.j2" %}{{ true }}')
    marked = literal_marked(env, source)
    assert marked is not None
    found = literal_shape(env, source)
    assert found is not None and found[2] == ["case ", 7, "x", 3]
    want = parse(env, source)
    values = iter(found[2])
    for got in marked.find_all(nodes.Const):
        if isinstance(got.value, str) and got.value.startswith("\x00"):
            got.value = next(values)
    assert dump_tree(marked) == dump_tree(want)
    assert literal_marked(env, "{{ x }} {{- y }}") is None  # the scan declines (a modifier)
    assert literal_marked(env, "{{ 1.5 }}") is None  # a float the scan keeps: not the lexer's
