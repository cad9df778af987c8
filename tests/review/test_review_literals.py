"""Templates that differ only in a literal inside a tag share code only where it is right.

:mod:`promptops.review.literals` lets the code shape of :mod:`promptops.review.skeleton`
leave a string or number literal out where Jinja's code holds it as itself. A literal
wrongly left out merges two templates whose code differs (a fold that took the first
template's value, a jump Python's compiler fixed on it, a bound measured from it): each
family below is templates that differ only in one literal, in a place where that can go
wrong, compiled one after the other through one cache; each must be Jinja's own code
(instruction by instruction, constants by value) and render as Jinja renders it.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_review_skeleton import _norm, _root

from promptops.review.literals import misplaced
from promptops.review.skeleton import ShapeCache
from promptops.sandbox.environment import environment

# each family: a template with {v} where the literal goes, and the literals (as written)
FAMILIES: list[tuple[str, list[str]]] = [
    # folded: a concatenation, a filter of a literal, arithmetic outside the sandbox's
    ('{% set label = "case " ~ {v} %}{{ label }} {{ topic }}', ["7", "8", "0", "'x'"]),
    ('{{ "case " ~ {v} }} and {{ topic }}', ["7", "8", "'<b>'"]),
    ("{{ {v} | upper }} {{ topic }}", ['"abc"', '"def"', '" x "']),
    ("{{ ({v} | trim) ~ topic }}", ['" a "', '"b"', '"c  "']),
    ("{{ {v} / 2 }}{{ topic }}", ["7", "8", "1.5"]),
    ("{{ topic ~ ({v} / 2) }}", ["7", "9"]),
    ("{{ -{v} }}{{ topic }}", ["7", "0"]),
    ('{{ "abc"[{v}] }}{{ topic }}', ["0", "1", "-1"]),
    ("{{ topic[:{v}] }}|{{ {v}[:2] }}", ['"abcd"', '"xyz"']),
    # compared
    ('{% if mode == {v} %}yes{% else %}no{% endif %}', ['"fast"', '"slow"', "7", "0", '""']),
    ('{% if {v} == mode %}yes{% endif %}{% if {v} == {v} %}same{% endif %}', ['"a"', '"b"']),
    ('{% if mode in [{v}, "x"] %}in{% endif %}', ['"fast"', '"slow"']),
    ('{% if mode in [{v}, mode] %}in{% endif %}', ['"fast"', '"slow"']),
    ("{% if count > {v} %}more{% endif %}{% if 1 < {v} < count %}mid{% endif %}",
     ["3", "0", "10"]),
    ("{% if count is divisibleby {v} %}div{% endif %}", ["2", "3", "5"]),
    # tested, short-circuited, conditional: a jump on a constant
    ("{% if {v} %}yes{% else %}no{% endif %}", ["1", "0", '""', '"x"']),
    ("{% if mode and {v} %}yes{% endif %}{% if mode or {v} %}or{% endif %}",
     ["1", "0", '""']),
    ("{% if not {v} %}neg{% endif %}{{ topic if {v} else mode }}", ["1", "0"]),
    ("{{ {v} and topic }}{{ {v} or mode }}", ["1", "0", '"z"']),
    ("{% for x in items if {v} %}{{ x }}{% endfor %}", ["1", "0"]),
    # filter and test arguments, keywords, calls
    ('{{ who | default({v}) }} / {{ topic | replace("a", {v}) }}', ['"reader 7"', '"r8"', "9"]),
    ("{{ topic | truncate({v}) }}|{{ topic | truncate({v}, killwords=true) }}",
     ["5", "12", "40"]),
    ("{{ topic | indent(width={v}) }}{{ topic | center({v}) }}", ["2", "4"]),
    ("{{ items | join({v}) }}", ['", "', '"-"']),
    # dict keys, subscripts, attributes
    ('{% set t = {{v}: topic, "k": mode} %}{{ t[{v}] }} {{ t.k }}', ['"id-7"', '"id-8"', "3"]),
    ('{% set t = {"k": {v}} %}{{ t.k }}', ['"one"', "2", "2.5"]),
    ("{{ items[{v}] }} {{ items.{v} }}", ["0", "1"]),
    # loop and range bounds, loop arithmetic
    ("{% for n in range({v}) %}{{ n * 4 }}{{ loop.index + {v} }},{% endfor %}",
     ["3", "0", "5"]),
    ("{% for n in range({v}, 10) %}{{ n }}{% endfor %}", ["3", "8"]),
    ("{% for x in items[:{v}] %}{{ x }}{% endfor %}", ["1", "2"]),
    ("{% for x in [{v}, 'b'] %}{{ x }}{% endfor %}{{ topic }}", ['"a"', '"long item"']),
    ("{% for x in ({v}, 'b') %}{{ x }}{% endfor %}", ['"a"', '"long item"']),
    # printed, set, macros, raw
    ("{{ {v} }} {{ topic }}", ['"lit"', "7", "1.0", '"<b>"']),
    ("{% set n = {v} %}{{ n }} {{ n + 1 }}", ["7", "8", "1.5"]),
    ("{% macro m(a={v}) %}[{{ a }}]{% endmacro %}{{ m() }}{{ m(topic) }}", ["1", '"d"']),
    ("{% raw %}{{ {v} }}{% endraw %}{{ topic }}", ['"a"', '"b"']),
    # adjacent strings, an included name that is an expression
    ('{{ topic ~ ({v} "tail") }}', ['"a"', '"b"']),
    ('{% include {v} ~ ".j2" %}', ['"p1"', '"p2"']),
    ('{% include [{v}, "p2.j2"] %}', ['"p1.j2"', '"none.j2"']),
    # numbers in every spelling
    ("{{ topic ~ {v} }}", ["7", "0x1F", "1_000", "1e3", "2.50", "0b11"]),
]

CONTEXTS = [
    {"topic": "a topic", "mode": "fast", "count": 6, "items": ["x", "y", "z"], "who": None},
    {"topic": "<b>other</b>", "mode": "", "count": 0, "items": [], "who": "ann"},
    {"topic": "long " * 12, "mode": 7, "count": 15, "items": ["q"], "who": ""},
]
PARTIALS = {"p1.j2": "one {{ topic }}", "p2.j2": "two {{ mode }}"}


def _render(tpl: object, ctx: dict[str, object]) -> str:
    try:
        return tpl.render(**ctx)  # type: ignore[attr-defined, no-any-return]
    except Exception as exc:  # a family may fail on some contexts: it must fail alike
        return f"{type(exc).__name__}: {exc}"


@pytest.mark.parametrize("mode", ["standalone", "jinja"])
@pytest.mark.parametrize(("template", "literals"), FAMILIES, ids=[f[0] for f in FAMILIES])
def test_a_literal_is_left_out_only_where_the_code_holds_it(
        mode: str, template: str, literals: list[str]) -> None:
    env = environment(PARTIALS, mode)
    cache = ShapeCache()
    for literal in literals * 2:  # the second round takes the shapes' code
        source = template.replace("{v}", literal)
        jinja = env.compile(source)
        tpl = cache.from_string(env, mode, source)
        code = tpl.root_render_func.__code__  # type: ignore[attr-defined]
        assert _norm(code) == _norm(_root(jinja)), source
        own = env.from_string(source)
        # the output bound's constant is module code, outside root
        assert tpl.root_render_func.__globals__.get("_po_fixed") == \
            own.root_render_func.__globals__.get("_po_fixed"), source  # type: ignore[attr-defined]
        for ctx in CONTEXTS:
            assert _render(tpl, ctx) == _render(own, ctx), (source, ctx)


def test_literals_that_stay_plain_operands_share_one_code() -> None:
    """The rule must also leave literals out: 30 prompts that differ in a number in a
    ``set``, a string compared, a filter argument, a dict key and a range bound are one
    compile."""
    env = environment({}, "standalone")
    cache = ShapeCache()
    for i in range(30):
        source = (f'{{% set label = "case " ~ {i} %}}{{% if mode == "m{i}" %}}yes{{% endif %}}'
                  f'{{{{ who | default("reader {i}") }}}}{{% set t = {{"id-{i}": label}} %}}'
                  f'{{{{ t["id-{i}"] }}}}{{% for n in range({i % 5}) %}}{{{{ n + {i} }}}}'
                  "{% endfor %}\n")
        tpl = cache.from_string(env, "standalone", source)
        assert tpl.render(mode="m3", who=None) == env.from_string(source).render(
            mode="m3", who=None)
    assert len(cache._shapes["standalone"].code) == 1


def test_a_folded_literal_is_kept_in_the_key() -> None:
    """``{{ "abc{i}" | upper }}`` is folded when compiled: one code per literal."""
    env = environment({}, "jinja")
    cache = ShapeCache()
    for i in range(4):
        tpl = cache.from_string(env, "jinja", f'{{{{ "abc{i}" | upper }}}} {{{{ x }}}}')
        assert tpl.render(x="y") == f"ABC{i} y"
    assert len(cache._shapes["jinja"].code) == 4


def test_a_marker_anywhere_but_whole_is_misplaced() -> None:
    """The check of the compiled code: a marker joined into a longer string, written as a
    repr, or gone, is not left out; one standing alone, or as an item of a constant tuple,
    is."""
    code = compile("def f(x):\n    return (x, '\\x000\\x00', ('\\x001\\x00', 2), "
                   "'a\\x002\\x00', \"'\\\\x003\\\\x00'\")\n", "<t>", "exec")
    assert misplaced(code, frozenset({0, 1, 2, 3, 4})) == {2, 3, 4}
    assert misplaced(code, frozenset({0, 1})) == set()


def test_a_raw_shape_with_literals_skips_the_token_objects() -> None:
    """Prompts that differ only in literals the code holds as markers take their code from
    the raw token stream's key; a literal kept as written (folded) keys a plan of its
    own; ``7`` and ``7.0`` (equal) are not merged."""
    env = environment({}, "jinja")
    cache = ShapeCache()
    sources = [f'{{% set n = "case " ~ {i} %}}{{{{ n }}}}{{{{ "{i % 2}" | upper }}}}'
               f'{{{{ x | default({v}) }}}}' for i in range(12) for v in (f"{i}", f"{i}.0")]
    for source in sources * 2:
        tpl = cache.from_string(env, "jinja", source)
        code = tpl.root_render_func.__code__  # type: ignore[attr-defined]
        assert _norm(code) == _norm(_root(env.compile(source))), source
        assert tpl.render() == env.from_string(source).render(), source
    shapes = cache._shapes["jinja"]
    # one raw shape per kind of number (integer, float), one plan per kept "0" / "1"
    assert len(shapes.raw) == 2 and all(len(plans) == 2 for _, plans in shapes.raw.values())
    assert len(shapes.code) == 4


# a random expression over a few variables and literal slots (@v0@, @v1@, ...): the
# families above, mixed; the same layout filled with other literals must not take code
# that differs from Jinja's
_OPS = ["~", "+", "-", "*", "/", "//", "%", "==", "!=", "<", "in", "and", "or"]
_FILTERS = ["upper", "trim", "default({a})", "replace({a}, {a})", "truncate({a})", "length",
            "join({a})", "int", "string", "first"]
_LITS = ['"a"', '"b c"', "0", "1", "7", "2.5", '""', '" x "', "-3", "1_0"]


def _expr(draw: st.DrawFn, depth: int, slots: list[int]) -> str:
    def slot() -> str:
        slots.append(len(slots))
        return f"@v{len(slots) - 1}@"
    kind = draw(st.integers(0, 8 if depth < 3 else 1))
    if kind == 0:
        return draw(st.sampled_from(["topic", "mode", "count", "items", "loop_free"]))
    if kind == 1:
        return slot()
    if kind in (2, 3):
        op = draw(st.sampled_from(_OPS))
        return f"({_expr(draw, depth + 1, slots)} {op} {_expr(draw, depth + 1, slots)})"
    if kind == 4:
        f = draw(st.sampled_from(_FILTERS))
        while "{a}" in f:
            f = f.replace("{a}", _expr(draw, depth + 1, slots), 1)
        return f"({_expr(draw, depth + 1, slots)} | {f})"
    if kind == 5:
        return (f"({_expr(draw, depth + 1, slots)} if {_expr(draw, depth + 1, slots)} "
                f"else {_expr(draw, depth + 1, slots)})")
    if kind == 6:
        return f"[{_expr(draw, depth + 1, slots)}, {_expr(draw, depth + 1, slots)}]"
    if kind == 7:
        return f"(not {_expr(draw, depth + 1, slots)})"
    return f"{_expr(draw, depth + 1, slots)}[{_expr(draw, depth + 1, slots)}]"


@st.composite
def _layouts(draw: st.DrawFn) -> tuple[str, int]:
    slots: list[int] = []
    parts = []
    for _ in range(draw(st.integers(1, 3))):
        e = _expr(draw, 0, slots)
        parts.append(draw(st.sampled_from([
            f"{{{{ {e} }}}}", f"{{% set s = {e} %}}[{{{{ s }}}}]",
            f"{{% if {e} %}}yes{{% endif %}}",
            f"{{% for x in range(3) if {e} %}}{{{{ x }}}}{{% endfor %}}",
            f"{{% for x in {e} %}}<{{{{ x }}}}>{{% endfor %}}"])))
    return " / ".join(parts), len(slots)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_layouts(), st.data())
def test_random_layouts_take_only_jinjas_code(layout: tuple[str, int], data: st.DataObject
                                             ) -> None:
    template, n = layout
    env = environment({}, "jinja")
    cache = ShapeCache()
    for _ in range(3):
        lits = data.draw(st.lists(st.sampled_from(_LITS), min_size=n, max_size=n))
        source = template
        for k, lit in enumerate(lits):
            source = source.replace(f"@v{k}@", lit)
        try:
            jinja = env.compile(source)
        except Exception as exc:
            with pytest.raises(type(exc)):
                cache.from_string(env, "jinja", source)
            continue
        tpl = cache.from_string(env, "jinja", source)
        code = tpl.root_render_func.__code__  # type: ignore[attr-defined]
        assert _norm(code) == _norm(_root(jinja)), source
        own = env.from_string(source)
        assert tpl.root_render_func.__globals__.get("_po_fixed") == \
            own.root_render_func.__globals__.get("_po_fixed"), source  # type: ignore[attr-defined]
        for ctx in CONTEXTS:
            assert _render(tpl, ctx) == _render(own, ctx), (source, ctx)


def test_a_layout_with_other_literals_skips_the_lexer() -> None:
    """literal_shape's key masks strings and plain integers inside tags: prompts that
    differ only there take their code without a Jinja token, one plan for all."""
    env = environment({}, "jinja")
    cache = ShapeCache()
    for i in range(10):
        source = (f'{{% set n = "case " ~ {i} %}}{{{{ n }}}}{{% if m == "m{i}" %}}y'
                  f'{{% endif %}}{{{{ x | default("r{i}") }}}}\n')
        tpl = cache.from_string(env, "jinja", source)
        assert tpl.render(m="m3") == env.from_string(source).render(m="m3"), source
    shapes = cache._shapes["jinja"]
    assert len(shapes.by_text) == 1 and len(next(iter(shapes.by_text.values()))[1]) == 1
