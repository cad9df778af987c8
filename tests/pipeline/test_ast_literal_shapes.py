"""Templates that differ only in literals inside their tags share one parse shape.

:mod:`promptops.pipeline.astshapes` takes each string and number literal inside a tag as a
value of the shape (Jinja's parser never reads one: it only wraps it in a ``Const``). Each
family below is templates that differ only in one literal, parsed one after the other by
one :class:`AstShapes`: every tree must be Jinja's own, node for node and line for line,
and what the include walk reads of it must be what it reads of Jinja's tree.
"""

from __future__ import annotations

import pytest
from helpers.templates import dump_tree
from jinja2 import TemplateSyntaxError

from promptops.pipeline.astshapes import AstShapes
from promptops.pipeline.templates import TemplateIndex, references_in
from promptops.sandbox.nesting import parse

FAMILIES: list[tuple[str, list[str]]] = [
    ('{% set label = "case " ~ {v} %}\n{{ label }} {{ topic }}', ["7", "8", "0", "'x'", "1.5"]),
    ('{% if mode == {v} %}yes{% elif {v} %}t{% endif %}', ['"fast"', '"slow"', "7", '""']),
    ('{{ who | default({v}) }} / {{ topic | replace("a", {v}) }}', ['"reader 7"', "9"]),
    ('{% set t = {{v}: topic} %}{{ t[{v}] }} {{ items.{v} }}', ["3", "4"]),
    ("{% for n in range({v}) %}{{ loop.index + {v} }}{% endfor %}", ["3", "0x1F", "1_000"]),
    ("{% raw %}{{ {v} }}{% endraw %}{{ {v} }}", ['"a"', '"b"']),
    ('{{ {v} "tail" }} {{ {v} }}', ['"a"', '"b"']),  # adjacent strings join
    ("{% include {v} %}{% include [{v}, 'x.j2'] %}", ['"a.j2"', '"b.j2"', "5", "2.5"]),
    ('{% include "p" ~ {v} %}{% import {v} as m %}', ['"1"', "2"]),
    ("{{ 'a\\tb' ~ {v} }}{{ {v} }}", ["'x\\ny'", "'\\u00e9'", "'\\x41'", "'\\\\x00'"]),
]


@pytest.mark.parametrize(("template", "literals"), FAMILIES, ids=[f[0] for f in FAMILIES])
def test_a_literal_is_a_value_of_the_parse_shape(template: str, literals: list[str]) -> None:
    env = TemplateIndex().env
    shapes = AstShapes()
    for literal in literals * 2:  # the second round: every tree from the shape's copy
        source = template.replace("{v}", literal)
        try:
            want = parse(env, source)
        except TemplateSyntaxError as exc:
            with pytest.raises(TemplateSyntaxError) as raised:
                shapes.parse(env, source)
            assert (raised.value.message, raised.value.lineno) == (exc.message, exc.lineno)
            continue
        got = shapes.parse(env, source)
        assert dump_tree(got) == dump_tree(want), source
        assert got == want
        walked = shapes.references(got, references_in)
        assert walked is None or walked == references_in(want), source


def test_prompts_differing_in_their_literals_are_one_shape() -> None:
    env = TemplateIndex().env
    shapes = AstShapes()
    for i in range(20):
        source = (f'{{% set label = "case " ~ {i} %}}{{% if mode == "m{i}" %}}yes{{% endif %}}'
                  f'{{{{ who | default("reader {i}") }}}}{{% for n in range({i}) %}}x'
                  "{% endfor %}\n")
        assert dump_tree(shapes.parse(env, source)) == dump_tree(parse(env, source))
    assert len([m for m in shapes._marked.values() if m is not None]) == 1
