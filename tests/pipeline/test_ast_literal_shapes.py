"""Templates that differ only in literals inside their tags share one parse shape.

:mod:`promptops.pipeline.astshapes` takes each string and number literal inside a tag as a
value of the shape (Jinja's parser never reads one: it only wraps it in a ``Const``). Each
family below is templates that differ only in one literal, parsed one after the other by
one :class:`AstShapes`: every tree must be Jinja's own, node for node and line for line,
and what the include walk reads of it must be what it reads of Jinja's tree.
"""

from __future__ import annotations

import re

import pytest
from helpers.templates import dump_tree
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jinja2 import TemplateSyntaxError

from promptops.pipeline.astshapes import AstShapes, _shape
from promptops.pipeline.templates import TemplateIndex, references_in
from promptops.pipeline.textshape import _LITERAL, literal_shape
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
    # dict literals (session 21: the scan balances braces as Jinja's lexer does)
    ('{{ {"a": {v}}["a"] }} {{ {{v}: [{v}]}}}', ['"x"', "7", "'}}'", "2.5"]),
    ('{% set d = {"k": {"n": {v}}} %}{{ f(**{"k": {v}}) }}{{ d }}', ["1", '"%}"', "0"]),
    ("{%- raw -%} {{ {v} }} {%- endraw %}\n{{ {v} }}", ['"a"', "3"]),
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


def test_a_layout_with_a_dict_literal_or_a_raw_block_is_lexed_once() -> None:
    """Templates of one layout holding a dict literal and a raw block get their trees
    from the scan's key after the first two (session 21: the scan declined both, so each
    took Jinja's lexer)."""
    env = TemplateIndex().env
    shapes = AstShapes()
    for i in range(4):
        source = (f'{{% set tags = {{"id-{i}": query}} %}}{{% raw %}}{{{{ {i} }}}}'
                  f"{{% endraw %}}\nCase {i}: {{{{ tags }}}}\n")
        assert dump_tree(shapes.parse(env, source)) == dump_tree(parse(env, source))
    assert len(shapes._by_text) == 1


_PIECES = ["x", "v2", "é", "7", "0", "07", "12", "1.5", "1e3", "0x1F", "1_0", '"s"', "'t 1'",
           " ", ".", "(", ")", "[", "]", ",", ":", "+", "-", "*", "/", "~", "==", "<", "|",
           "_", "e", "is", "in", "'a\\nb'", '"q\\"t"', "'\\\\'", "'\\x41'", "'\\0'", "'\\x4'",
           "'\\N{DIGIT ONE}'", "'é\\t'", "'\\\n'", "{", "}", "{", "}", "%", "'}}'", '"%}"',
           "#"]


def _retyped(body: str) -> str:
    """``body`` with each literal the scan masks replaced by another of its kind (a string
    with the written one's line breaks, which the key keeps)."""
    def other(m: re.Match[str]) -> str:
        if m.group(1) is not None:
            return '"other 9' + "\n" * m.group(1).count("\n") + '"'
        return str(int(m.group(2)) * 7 + 3)
    return _LITERAL.sub(other, body)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_PIECES), min_size=1, max_size=12))
def test_a_masked_literal_is_one_token_of_the_lexer(pieces: list[str]) -> None:
    """Where :func:`literal_shape` masks a literal, the lexer has one token of that kind
    there: a source with other literals in those places lexes into the same tokens but
    for those literals' values, which are the scan's."""
    env = TemplateIndex().env
    body = "".join(pieces)
    source, other = f"a {{{{{body}}}}} b", f"a {{{{{_retyped(body)}}}}} b"
    fast, fast_other = literal_shape(env, source), literal_shape(env, other)
    if fast is None:
        return
    assert fast_other is not None and fast_other[0] == fast[0]
    try:
        raw = list(env.lexer.tokeniter(source, None, None))
        raw_other = list(env.lexer.tokeniter(other, None, None))
    except TemplateSyntaxError:
        return
    mine, theirs = _shape(env.lexer, raw), _shape(env.lexer, raw_other)
    if mine is None or theirs is None:
        return
    assert mine[0] == theirs[0], (source, other)  # the same tokens but for literal values
    for scanned, lexed in ((fast, mine), (fast_other, theirs)):
        # each masked literal is the lexer's, in order (the lexer has more: floats, ...)
        masked = iter(lexed[1][lexed[3]:])
        assert all(any(type(v) is type(w) and v == w for w in masked) for v in scanned[2])


def test_an_exponents_digits_are_no_integer() -> None:
    """``7e+7`` is one float token: the digits after ``e+`` are not an integer of their own
    (hypothesis found ``7e+7`` above, session 20; the scan had the literal 7)."""
    env = TemplateIndex().env
    for body in ("7e+7", "7E-7", "1.5e+3", "1_0e+2"):
        found = literal_shape(env, f"a {{{{ {body} }}}} b")
        assert found is not None and found[2] == [], body
    found = literal_shape(env, "a {{ x.e+7 }} b")
    assert found is not None and found[2] == [7]


def test_an_escaped_string_is_a_literal_with_the_lexers_value() -> None:
    """A string with a backslash escape is masked, its value what Jinja's lexer makes of
    it (``{{ '\\n\\nARGUMENTS: ' ~ ARGUMENTS }}``: a tenth of the real prompts' texts made
    the lexer run on each, session 20); an escape the lexer refuses, or one that makes a
    NUL, leaves the source to the lexer."""
    env = TemplateIndex().env
    for source in ("a {{ '\\n\\nARGUMENTS: ' ~ ARGUMENTS }} b", 'a {{ "\\"q\\\\" }}',
                   "{% set s = '\\u00e9\\x41\\101' %}{{ s }}", "{{ 'a\\\nb' ~ x }}"):
        found = literal_shape(env, source)
        assert found is not None, source
        raw = list(env.lexer.tokeniter(source, None, None))
        shape = _shape(env.lexer, raw)
        assert shape is not None and found[2] == shape[1][shape[3]:], source
    for source in ("{{ '\\x4' }}", "{{ '\\0' }}", "{{ 'a\\' }}"):
        assert literal_shape(env, source) is None, source
