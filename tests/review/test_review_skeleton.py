"""A template compiled from its shape's code is the template Jinja compiles.

:mod:`promptops.review.skeleton` compiles the first template of each shape (its tokens
with the text and the plain template names marked) and gives every later one that code
with its own constants. Here each template's code is compared with Jinja's own compile,
instruction by instruction (constants by value, line numbers included), in every
whitespace mode, inline and loaded by name; and what does not compile fails exactly as
Jinja fails.
"""

from __future__ import annotations

import dis
from types import CodeType

import pytest
from helpers.templates import template_files
from jinja2 import DictLoader, TemplateSyntaxError

from promptops.review.skeleton import ShapeCache
from promptops.sandbox.environment import environment

SOURCES = [
    "",
    "plain text only",
    "x\r\ny\n",
    "Write about {{ topic }} for case 7.\n",
    "Write about {{ topic }} for case 8.\n",
    '{% include "partials/shared.j2" %}\nWrite about {{ topic }} for case 7.\n',
    '{% include "partials/s1.j2" ignore missing %}{% include "partials/s2.j2" with context %}',
    '{% include "partials/" ~ kind ~ ".j2" %}',
    '{% include "a.j2" if x else "b.j2" %}',
    '{% include ["a.j2", "b.j2"] %}',
    '{% include "a.j2" "b.j2" %}',
    '{% include "a.j2"|lower %}',
    '{% from "m.j2" import hi %}{{ hi(who) }} and text',
    '{% import "m.j2" as m %}{{ m.hi(who) }}',
    '{% extends "base.j2" %}{% block body %}Body {{ x }}{% endblock %}',
    "Hello {{ x }}{% if a %}yes{% else %}no{% endif %}\n{% for i in [1, 2] %} - {{ i }}\n"
    "{% endfor %}",
    "  {% if a %}\n  indented\n  {% endif %}\n",
    "{%- if a -%}\n  trimmed  \n{%- endif -%}",
    "{%+ if a +%}\nkept\n{% endif %}",
    "{% set y %}abc{% endset %}{{ y|upper }}",
    "{% macro m(a) %}<{{ a }}>{% endmacro %}{{ m('q') }}text{{ 'const' }}after",
    "{% filter upper %}text in a filter{% endfilter %}",
    "{% raw %}{{ x }} raw{% endraw %} after",
    "{# a comment #}text {{ 'a' ~ 'b' }} {{ 1 + 2 }}\n",
    "same\nsame\n{{ x }}same\n",
    "{% for p in ['intro', 'body'] %}{{ p }} of {{ topic }}\n{% endfor %}",
    "{% call m() %}inside a call{% endcall %}",
    "multi\n\n\nline {{\n x\n }} text\n",
    "unicode: é — 你好 {{ x }} \u2028 end",
    "quotes ' \" \\ and %s %(x)s {} text",
]
BROKEN = [
    "{% if x %}never closed",
    "{{ x | no_such_filter }}",
    "{% endfor %}",
    "{{ (((((((((((((((((((((((((x)))))))))))))))))))))))))}}",
    "text {% include %}",
    "{% block a %}{% endblock %}{% block a %}{% endblock %}",
]


def _norm(code: CodeType) -> tuple[object, ...]:
    """What code does: each instruction with its argument's value and line (constants by
    value, so the order of the constant table does not count), functions recursively."""
    out: list[object] = []
    for ins in dis.get_instructions(code):
        value = ins.argval
        out.append((ins.opname, _norm(value) if isinstance(value, CodeType) else repr(value),
                    ins.positions.lineno if ins.positions else None))
    return (tuple(out), code.co_names, code.co_varnames, code.co_filename, code.co_name,
            code.co_firstlineno)


@pytest.mark.parametrize("mode", ["standalone", "jinja", None])
def test_inline_code_is_jinjas(mode: str | None) -> None:
    env = environment({}, mode)
    cache = ShapeCache()
    sources = SOURCES + template_files()
    assert len(sources) > 40
    for source in sources * 2:  # the second round takes every shape's code
        try:
            jinja = env.compile(source)
        except Exception as exc:  # some fixtures are broken on purpose
            with pytest.raises(type(exc)) as mine:
                cache.from_string(env, mode, source)
            assert str(mine.value) == str(exc)
            continue
        tpl = cache.from_string(env, mode, source)
        code = tpl.root_render_func.__code__  # type: ignore[attr-defined]
        assert _norm(code) == _norm(_root(jinja)), source


def _root(module: CodeType) -> CodeType:
    return next(c for c in module.co_consts if isinstance(c, CodeType) and c.co_name == "root")


@pytest.mark.parametrize("mode", ["standalone", "jinja"])
def test_loaded_code_is_jinjas(mode: str) -> None:
    names = {f"t/{i}.j2": s for i, s in enumerate(SOURCES)}
    names.update({f"u/{i}.md.j2": s for i, s in enumerate(SOURCES)})
    names.update({f"q/{i}'{{x}}.j2": s for i, s in enumerate(SOURCES)})  # not marked
    env = environment(names, mode)
    env.bytecode_cache = ShapeCache().loader_cache(mode)
    for name, source in names.items():
        loaded = env.get_template(name).root_render_func.__code__  # type: ignore[attr-defined]
        fresh = environment(names, mode)
        assert _norm(loaded) == _norm(_root(fresh.compile(source, name))), name


def test_one_shape_compiles_once() -> None:
    env = environment({}, "standalone")
    cache = ShapeCache()
    for i in range(50):
        cache.from_string(env, "standalone",
                          f'{{% include "partials/s{i}.j2" %}}\nWrite about {{{{ t }}}} ({i}).\n')
    assert len(cache._shapes["standalone"].code) == 1


def test_a_known_raw_shape_skips_the_token_objects() -> None:
    """The second template of a raw shape takes its code from the raw token stream's key
    (no wrap, no stream filters); one whose value holds a NUL still compiles as Jinja."""
    env = environment({}, "jinja")
    cache = ShapeCache()
    sources = [f'{{% include "partials/s{i}.j2" %}}\nCase {i}: {{{{ t }}}}\n' for i in range(20)]
    for source in sources:
        code = cache.from_string(env, "jinja", source).root_render_func.__code__  # type: ignore[attr-defined]
        assert _norm(code) == _norm(_root(env.compile(source))), source
    shapes = cache._shapes["jinja"]
    assert len(shapes.raw) == 1 and len(shapes.code) == 1
    nul = 'Case \x001\x00: {{ t }}'  # the raw shape of "Case 1: {{ t }}"
    cache.from_string(env, "jinja", "Case 1: {{ t }}")
    assert cache.from_string(env, "jinja", nul).render(t="x") == "Case \x001\x00: x"


def test_a_name_written_with_an_escape_is_not_marked_raw() -> None:
    """``"a\\tb.j2"`` is not its raw text once unescaped: such a name stays in the raw key,
    and the code is still Jinja's."""
    env = environment({}, "jinja")
    cache = ShapeCache()
    for i in range(3):
        for source in (f'{{% include "p{i}.j2" %}}x{i}', f'{{% include "p\\t{i}.j2" %}}x{i}',
                       f'{{% include "p{i}\n.j2" %}}x{i}'):  # a plain name's shape first
            code = cache.from_string(env, "jinja", source).root_render_func.__code__  # type: ignore[attr-defined]
            assert _norm(code) == _norm(_root(env.compile(source))), source


def test_loaded_shape_renders_its_own_text() -> None:
    names = {f"t/{i}.j2": f"Template {i} about {{{{ x }}}}" for i in range(5)}
    env = environment(names, "standalone")
    env.bytecode_cache = ShapeCache().loader_cache("standalone")
    env.loader = DictLoader(names)
    assert [env.get_template(n).render(x="y") for n in names] == [
        f"Template {i} about y" for i in range(5)]


@pytest.mark.parametrize("source", BROKEN)
def test_what_does_not_compile_fails_as_jinja_fails(source: str) -> None:
    env = environment({}, "standalone")
    cache = ShapeCache()
    with pytest.raises(Exception) as jinja:
        env.compile(source)
    with pytest.raises(Exception) as mine:
        cache.from_string(env, "standalone", source)
    assert type(mine.value) is type(jinja.value)
    assert str(mine.value) == str(jinja.value)
    if isinstance(jinja.value, TemplateSyntaxError):
        assert isinstance(mine.value, TemplateSyntaxError)
        assert mine.value.lineno == jinja.value.lineno


def test_a_nul_compiles_as_jinja_does() -> None:
    env = environment({}, "jinja")
    source = "a\x001\x00b {{ x }}"
    tpl = ShapeCache().from_string(env, "jinja", source)
    assert tpl.render(x=1) == "a\x001\x00b 1"


def test_a_shapes_strings_are_cut_at_their_markers_once() -> None:
    """A planned string holds its pieces (text, a value's place, ~place for its repr),
    cut when the shape compiles, and fills as the two regex passes filled it."""
    from promptops.review import skeleton

    c = "a\x001\x00b" + repr("\x002\x00") + "\x003\x00" + "\\x00 c"
    assert skeleton._pieces(c) == ["a", 1, "b", ~2, 3, "\\x00 c"]
    code = compile(f"x = {c!r}\ny = {chr(0) + '0' + chr(0)!r}", "<t>", "exec")
    plan = skeleton._plan(code)
    assert [what for _, what in plan[1]] == [["a", 1, "b", ~2, 3, "\\x00 c"], [0]]
    filled = skeleton._filled(plan, [7, "T", "n's", "U"])
    assert set(filled.co_consts) >= {"aTb\"n's\"U\\x00 c", 7}


class _Recorded(dict[str, object]):
    """The build's scans, recording which a compile took."""

    taken: set[str]

    def get(self, key: str, default: object = None) -> object:
        if key in self:
            self.taken.add(key)
        return super().get(key, default)


@pytest.mark.parametrize("mode", ["standalone", "jinja", None])
def test_code_keyed_by_the_builds_scans_is_jinjas(mode: str | None) -> None:
    """A render worker's shape cache takes the build's scans of the sources as written
    (the layout as written in the standalone mode, the source itself in the jinja mode,
    none in the legacy mode, whose syntax the scan does not read) and compiles what
    Jinja compiles."""
    from promptops.pipeline.templates import TemplateIndex

    index = TemplateIndex(keep_asts=True)
    for source in SOURCES:
        index.literal_shape(source)
    scans = _Recorded(index.written_scans())
    scans.taken = set()
    env, cache = environment({}, mode), ShapeCache(scans)  # type: ignore[arg-type]
    for source in SOURCES * 2:
        try:
            jinja = env.compile(source)
        except Exception:
            continue
        code = cache.from_string(env, mode, source).root_render_func.__code__  # type: ignore[attr-defined]
        assert _norm(code) == _norm(_root(jinja)), source
    assert (len(scans.taken) > 20) == (mode is not None), len(scans.taken)
