"""A layout as written stands for the layout the standalone rewrite makes of it.

:mod:`promptops.review.standalone_layout` keys a template on its tags as written and on
what its texts' first and last lines are (blank, as written, or not), and gives the texts
of the rewritten source without rewriting it. Here random layouts of tags, comments and
blank or written lines (with a few of what the key must refuse: modifiers, raw blocks,
open brackets, ``\\r``) are filled several ways, and for every source the key vouches for:
the rewrite itself (:func:`promptops.sandbox.whitespace.standalone`), scanned, must give
the texts the key's recipe gives, and every source of one key must be rewritten to one
layout; and the code :class:`~promptops.review.skeleton.ShapeCache` compiles from a key
must be Jinja's own.
"""

from __future__ import annotations

from helpers.templates import dump_code
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from promptops.pipeline.templates import TemplateIndex
from promptops.pipeline.textshape import literal_shape
from promptops.review.skeleton import ShapeCache
from promptops.review.standalone_layout import closed, layout, recipe, rewrites, rewritten
from promptops.sandbox.environment import environment
from promptops.sandbox.whitespace import standalone

TAGS = [
    "{{ x }}", "{{ x | upper }}", "{{ f(a, [1]) }}", "{% if a %}", "{% endif %}",
    "{% else %}", "{% for i in [1, 2] %}", "{% endfor %}", "{# c #}", "{#\n#}", "{#  #}",
    "{% include \"@\" %}", "{% include '@' ignore missing %}", "{% set s = '(' %}",
    "{% if (a %}", "{% if a) %}", "{% if f([a) %}", "{{ (x }}", "{% if a\n %}",
    "{{ x\n }}", "{%- if a %}", "{% endif -%}", "{%+ if a %}", "{# c -#}",
    "{% raw %}", "{% endraw %}", "{% from \"@\" import m %}",
    # literals, which the key masks: each filling writes its own (`N`, `S`)
    "{% set n = N %}", "{{ x ~ N }}", "{{ N / 2 }}", "{% set s = \"S\" %}", "{{ 'S(' ~ x }}",
    "{% if x == \"S\n\" %}",
    # raw blocks (a layout without modifiers, session 22) and brackets Jinja's lexer
    # balances (session 21)
    "{%- raw -%}", "{%- endraw %}", "{% set d = {'k': N} %}", "{{ {'a': [x]}['a'] }}",
    "{% set d = {'a': (1 %} %}", "{{ '}}(' ~ x }}", "{# {{ c }} #}", "{% if {'a': 1} %}",
]
TEXT = st.lists(st.sampled_from([" ", "  ", "\t", "\n", "\n", "\n", "a", "b c", "{", "}",
                                 "\r\n", "-"]), max_size=6).map("".join)
NAME = st.sampled_from(["p.j2", "partials/q.j2", "a b.j2"])
LAYOUT = st.lists(st.one_of(st.just(None), st.sampled_from(TAGS)), min_size=1, max_size=10)


def _fill(layout_: list[str | None], texts: list[str], names: list[str]) -> str:
    return "".join(texts[i % len(texts)] if piece is None
                   else piece.replace("@", names[i % len(names)])
                   .replace("N", str(len(texts) * 10 + i)).replace("S", names[0][:i])
                   for i, piece in enumerate(layout_))



FILLINGS = st.lists(st.tuples(st.lists(TEXT, min_size=1, max_size=5),
                              st.lists(NAME, min_size=1, max_size=2)), min_size=2, max_size=5)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(LAYOUT, FILLINGS)
def test_the_recipe_gives_the_rewrites_texts(layout_: list[str | None],
                                            fillings: list[tuple[list[str], list[str]]]
                                            ) -> None:
    env = environment({}, "standalone")
    assert rewrites(env)
    seen: dict[object, object] = {}  # layout key -> the rewritten source's layout key
    for texts, names in fillings:
        source = _fill(layout_, texts, names)
        written = layout(env, source)
        if written is None or not closed(written[0]):
            continue
        fast = literal_shape(env, standalone(source))
        assert fast is not None, source  # what the key vouches for, the scan reads
        assert rewritten(written[1], recipe(written[0])) == fast[1], source
        assert seen.setdefault(written[0], fast[0]) == fast[0], source
        assert [(type(v), v) for v in written[2]] == [(type(v), v) for v in fast[2]], source


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(LAYOUT, FILLINGS)
def test_code_from_a_written_layout_is_jinjas(layout_: list[str | None],
                                             fillings: list[tuple[list[str], list[str]]]
                                             ) -> None:
    env = environment({}, "standalone")
    shapes = ShapeCache()._of("standalone")
    for texts, names in [*fillings, *fillings]:
        source = _fill(layout_, texts, names)
        try:
            expect = dump_code(env.compile(source))
        except Exception as exc:
            try:
                shapes.compile(env, source, None, None)
            except Exception as got:
                assert type(got) is type(exc) and str(got) == str(exc)
            else:
                raise AssertionError(f"{source!r} compiled, Jinja raised {exc!r}") from None
            continue
        assert dump_code(shapes.compile(env, source, None, None)) == expect, source


def test_a_layout_seen_once_is_not_rewritten_again() -> None:
    """The second text of a layout as written takes its code without the rewrite (its
    texts differ; its blank lines are written alike), and a text whose blank line is
    written otherwise is a layout of its own."""
    env = environment({}, "standalone")
    shapes = ShapeCache()._of("standalone")
    for i in range(3):
        source = f'{{% include "p{i}.j2" %}}\n{{% if a %}}\nCase {i}: {{{{ x }}}}\n{{% endif %}}\n'
        code = shapes.compile(env, source, None, None)
        assert dump_code(code) == dump_code(env.compile(source))
    assert len(shapes.by_source) == 1
    shapes.compile(env, '{% include "p.j2" %}\n{% if a %}  \nCase: {{ x }}\n{% endif %}\n',
                   None, None)
    assert len(shapes.by_source) == 2


def test_a_layout_differing_in_literals_is_not_rewritten_again() -> None:
    """Texts whose tags differ only in their literals are one layout as written (the
    rewrite never reads a literal's value), each filled with its own literals, those
    the code holds folded (``7 / 2``) as written, a plan per their value."""
    env = environment({}, "standalone")
    shapes = ShapeCache()._of("standalone")
    for i in [7, 8, 9, 8]:
        source = (f'{{% set label = "case " ~ {i} %}}\n{{% if a %}}\n{{{{ label }}}} '
                  f'{{{{ {i} / 2 }}}}: {{{{ x }}}}\n{{% endif %}}\n')
        code = shapes.compile(env, source, None, None)
        assert dump_code(code) == dump_code(env.compile(source)), source
    assert len(shapes.by_source) == 1
    ((_, unsafe, plans),) = shapes.by_source.values()
    assert unsafe == {2, 3} and len(plans) == 3  # `i / 2` folded: a plan per value of `i`


def test_a_raw_layout_seen_once_is_not_rewritten_again() -> None:
    """Texts holding a raw block on lines of its own are one layout as written: the
    second takes its code without the rewrite (the blanks of the raw tags' lines go
    inside those tags) and compiles what Jinja compiles."""
    env = environment({}, "standalone")
    shapes = ShapeCache()._of("standalone")
    for i in range(3):
        source = (f"Case {i}\n  {{% raw %}}\n{{{{ keep {i} }}}}\n  {{% endraw %}}  \n"
                  f"{{% if a %}}\n{{{{ x }}}}\n{{% endif %}}\n")
        assert dump_code(shapes.compile(env, source, None, None)) == \
            dump_code(env.compile(source)), source
    assert len(shapes.by_source) == 1


def test_what_the_key_cannot_vouch_for_has_none() -> None:
    env = environment({}, "standalone")
    for source in ["{%- if a %}", "{%- raw %}x{% endraw %}", "{% raw %}x{% endraw -%}\n",
                   "{%+ raw %}x{% endraw %}", "a\r\n{% if a %}"]:
        assert layout(env, source) is None, source
    for source in ["{% if (a %}\n{% endif %}", "{{ f(a }}", "{% if f([a) %}"]:
        written = layout(env, source)
        assert written is not None and not closed(written[0]), source
    assert not rewrites(environment({}, "jinja"))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(LAYOUT, FILLINGS)
def test_signatures_kept_by_text_give_the_same_layout(layout_: list[str | None],
                                                     fillings: list[tuple[list[str], list[str]]]
                                                     ) -> None:
    """The caller's memo of texts' signatures (short texts recur from prompt to prompt)
    changes no key: each layout is the one made without it."""
    env = environment({}, "standalone")
    seen: dict[str, tuple[object, ...]] = {}
    for texts, names in fillings:
        source = _fill(layout_, texts, names)
        assert layout(env, source, seen) == layout(env, source), source
    assert all(len(text) <= 120 for text in seen)


def test_a_texts_signature_is_kept_for_the_next_layout() -> None:
    env = environment({}, "standalone")
    seen: dict[str, tuple[object, ...]] = {}
    layout(env, "Task {{ a }}\n{% if b %}\nx{% endif %}\n", seen)
    assert seen == {"Task ": (None,), "\n": ("\n", "", True), "\nx": ("\n", None, True)}
    long = "y" * 121
    layout(env, long + "{{ a }}", seen)
    assert long not in seen  # a long text rarely recurs: not kept


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(LAYOUT, FILLINGS)
def test_a_layout_from_the_builds_scan_is_the_layout(layout_: list[str | None],
                                                    fillings: list[tuple[list[str], list[str]]]
                                                    ) -> None:
    """A render worker's layout of a text the build's index scanned takes that scan
    (its key as written, raw blocks declined) and is the layout its own scan makes."""
    env = environment({}, "standalone")
    index = TemplateIndex(keep_asts=True)
    for texts, names in fillings:
        source = _fill(layout_, texts, names)
        index.literal_shape(source)
        assert layout(env, source, None, index.written_scans()) == layout(env, source), source
    source = "{% if a %}\nkept {{ b }}\n{% endif %}\n"
    fake = ((("%", 1, " x "),), ["taken"], [])
    assert layout(env, source, None, {source: fake}) == (((("%", 1, " x "),), ()), ["taken"], [])
