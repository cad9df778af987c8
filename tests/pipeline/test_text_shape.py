"""A key made without Jinja's lexer stands for Jinja's own token shape.

:func:`promptops.pipeline.textshape.text_shape` cuts a source with one regular expression
and keys it on its tags as written, the texts between them (and plain template names)
being the values. :class:`~promptops.pipeline.astshapes.AstShapes` and the review's
:class:`~promptops.review.skeleton.ShapeCache` give a template the tree or the code of a
key seen before without lexing it, so the key must mean what Jinja's lexer would say:
here random layouts of tags (modifiers, raw blocks, comments, strings holding closers,
unbalanced brackets, names with quotes and escapes) are filled with random texts and
names, and for every source the scan vouches for, Jinja's lexer must agree with it (the
same values, in order), two sources of one key must lex alike (both fail, or both give
one token shape), and the tree and the code from a shared key must be Jinja's own.
"""

from __future__ import annotations

import threading

from helpers.templates import dump_code, dump_tree
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from promptops.pipeline.astshapes import AstShapes, _shape
from promptops.pipeline.templates import TemplateIndex
from promptops.pipeline.textshape import kept_shape, literal_shape, text_shape
from promptops.review.skeleton import ShapeCache
from promptops.sandbox.environment import environment
from promptops.sandbox.nesting import parse

TAGS = [
    "{{ x }}", "{{x}}", "{{ x | upper }}", "{{ 'a' ~ \"b\" }}", "{{ '}}' }}", "{{ '%}' }}",
    "{{ {'a': 1}['a'] }}", "{{ f( }}", "{{ x) }}", "{{- x }}", "{{ x -}}", "{{ x\n }}",
    "{% if a %}", "{% endif %}", "{% else %}", "{% for i in [1, 2] %}", "{% endfor %}",
    "{%- if a %}", "{% if a -%}", "{%+ if a %}", "{% if a +%}", "{% if (a %}", "{% if a) %}",
    "{% raw %}", "{% endraw %}", "{%raw%}", "{% set s = '%}' %}", "{% set s = \"#}\" %}",
    "{# c #}", "{#\n#}", "{#- c #}", "{# c -#}", "{# c +#}", "{#  #}", "{# { #}",
    "{% include \"@\" %}", "{% include '@' %}", "{% include \"@\" ignore missing %}",
    "{% include \"@\" with context %}", "{% include \"@\" without context %}",
    "{% include \"@\" asx %}", "{% include \"@\" + x %}", "{% include \"@\" \"b\" %}",
    "{% from \"@\" import hi %}", "{% import '@' as m %}", "{%include\"@\"%}",
    "{% include x %}", "{% extends \"@\" %}", "{% block b %}", "{% endblock %}",
    "{% include '@' if a else 'b' %}", "{{ '@' }}", "{% macro m(a) %}", "{% endmacro %}",
    "{% x @ %}", "{{ x\\y }}", "{% include \"a\\\"b\" %}",
    # escaped strings (session 20): Jinja's values, refusals (a bad escape, a NUL) alike
    "{{ '\\n@: ' ~ x }}", "{% set s = \"\\\"@\\t\" %}", "{{ '@\\' }}", "{{ '\\x4' }}",
    "{{ '\\0' }}", "{{ \"\\N{DIGIT ONE}\\u00e9\" ~ '\\\\' }}", "{{ '\\\n@' }}",
    # raw blocks with whitespace control, end tag variants, what is no raw block (session 21)
    "{%- raw %}", "{% raw -%}", "{%- raw -%}", "{%+ raw %}", "{% raw +%}", "{%- endraw %}",
    "{% endraw -%}", "{%+ endraw +%}", "{%endraw%}", "{% endraw x %}", "{% set s = 'raw' %}",
    "{%- raw -%}@{%- endraw -%}", "{% raw %}@{% endraw %}", "{%\nraw\n%}", "{% raw\t-%}\n",
    # brackets balanced as Jinja's lexer balances them, its errors too (session 21)
    "{{ {'a': @}['a'] }}", "{% set d = {'k': {'n': [x, (1)]}} %}", "{{ f(**{'k': v}) }}",
    "{{ {'a': 1}}}", "{{ {'a': 1 }} }}", "{% set d = {'a': 1 %} %}", "{{ {'a': (1 }) }}",
    "{{ {'a': [1} }}", "{{ { }}", "{{ } }}", "{% set d = {} }} %}", "{{ {} -}}",
    "{%- set d = {} %}", "{% set d = {} +%}", "{{ \"%.3f\" | format(x) }}", "{% set s = '{@}' %}",
    "{{ {'#': '%}'} }}", "{{ {\n'a': 1\n} }}", "{{ {'a': x\\y} }}", "{{ {'a': 'b} }}",
    "{{ {'a': x # } }}", "{{ {{'a': 1}: 2} }}", "{{ ['}}', {'a': \"\\\"}}\"}] }}",
    "{# {{ c }} % #}", "{# a # b #}", "{# @ #}", "{# {# #}",
]
TEXT = st.lists(st.sampled_from([*list("ab \n\t{}%#-+'\"\\\rx0é"), "\x00", "\\x00"]),
                max_size=8).map("".join)
NAME = st.text(alphabet=list("ab/._ '\"\\\n\r{}%#-"), max_size=6)
LAYOUT = st.lists(st.one_of(st.just(None), st.sampled_from(TAGS)), min_size=1, max_size=8)
FILLINGS = st.lists(st.tuples(st.lists(TEXT, min_size=1, max_size=4),
                              st.lists(NAME, min_size=1, max_size=3)), min_size=2, max_size=4)


def _fill(layout: list[str | None], texts: list[str], names: list[str]) -> str:
    out = []
    for i, piece in enumerate(layout):
        out.append(texts[i % len(texts)] if piece is None
                   else piece.replace("@", names[i % len(names)]))
    return "".join(out)


def _lexed(env: object, source: str) -> tuple[object, list[str]] | None:
    lexer = env.lexer  # type: ignore[attr-defined]
    try:
        raw = list(lexer.tokeniter(source, None, None))
    except Exception:
        return None
    shape = _shape(lexer, raw)
    assert shape is not None  # text_shape refuses every source _shape refuses
    return shape[0], shape[1][:shape[3]]  # the texts and names (literals come after)





@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(LAYOUT, FILLINGS)
def test_a_vouched_key_is_jinjas_token_shape(layout: list[str | None],
                                            fillings: list[tuple[list[str], list[str]]]
                                            ) -> None:
    env = TemplateIndex().env
    seen: dict[object, object] = {}  # text_shape's key -> the lexer's (key or failure)
    for texts, names in fillings:
        source = _fill(layout, texts, names)
        fast = text_shape(env, source)
        if fast is None:
            continue
        lexed = _lexed(env, source)
        if lexed is not None:
            assert lexed[1] == fast[1], source  # the lexer's values, in order
        got = None if lexed is None else lexed[0]
        assert seen.setdefault(fast[0], got) == got, source  # one key, one token shape


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(LAYOUT, st.lists(st.tuples(st.lists(TEXT, min_size=1, max_size=4),
                                  st.lists(NAME, min_size=1, max_size=3)),
                        min_size=3, max_size=5))
def test_trees_and_code_from_a_shared_key_are_jinjas(
        layout: list[str | None], fillings: list[tuple[list[str], list[str]]]) -> None:
    env = TemplateIndex().env
    standalone = environment({}, "standalone")
    shapes, code = AstShapes(), ShapeCache()
    for texts, names in [*fillings, *fillings]:
        source = _fill(layout, texts, names)
        try:
            want = dump_tree(parse(env, source))
        except Exception as exc:
            try:
                shapes.parse(env, source)
            except Exception as got:
                assert type(got) is type(exc) and str(got) == str(exc)
            else:
                raise AssertionError(f"{source!r} parsed, Jinja raised {exc!r}") from None
        else:
            assert dump_tree(shapes.parse(env, source)) == want, source
        try:
            expect = dump_code(standalone.compile(source))
        except Exception as exc:
            try:
                code._of("standalone").compile(standalone, source, None, None)
            except Exception as got:
                assert type(got) is type(exc) and str(got) == str(exc)
            else:
                raise AssertionError(f"{source!r} compiled, Jinja raised {exc!r}") from None
        else:
            got_code = code._of("standalone").compile(standalone, source, None, None)
            assert dump_code(got_code) == expect, source


def test_a_layout_seen_lexed_once_is_not_lexed_again() -> None:
    """The fast key is used: the second template of a layout gets its tree from it."""
    env = TemplateIndex().env
    shapes = AstShapes()
    for i in range(3):
        shapes.parse(env, f'{{% include "p{i}.j2" %}}\nCase {i}: {{{{ x }}}}\n')
    assert len(shapes._by_text) == 1
    fast = text_shape(env, '{% include "q.j2" %}\nOther text {{ x }}\n')
    assert fast is not None and fast[1] == ["q.j2", "\nOther text ", "\n"]


def test_what_the_scan_cannot_vouch_for_has_no_key() -> None:
    env = TemplateIndex().env
    for source in ["a {{- x }}", "a\r\nb {{ x }}", "a{{{ x }}", "{{ x\\y }}", "a\x00 {{ x }}",
                   "{# c -#} b", "{% raw %}{{ x }}", "{% raw %}", "{%- raw +%}a{% endraw %}",
                   "{{ {'a': 1 }} }}", "{{ {'a': (1 }) }}", "{% set d = {} }} %}", "{{ {",
                   "{{ {'a': 1} -}}", "{{ {'a': 'b} }}", "{# {{ x }}", "{{ {'a': '\\x4'} }}"]:
        assert text_shape(env, source) is None, source


RAW_AND_BRACES = [
    "a {% raw %}{{ x }} {% if %}{% endraw %} b {{ y }}", "{%raw%}{#{%endraw%}",
    "t  \n{%- raw -%}\n  {{ x }}  \n{%- endraw -%}\n b {{ y }}\n", "{%+ raw %}x{%+ endraw +%}",
    "{% raw %}{% endraw x %}{% endraw %}", "{% raw %}{% endraw %}", "a {%- raw %}{%- endraw %}",
    "{% set voice = \"raw, first person\" %}{{ voice }}", "{{ {'a': 1}['a'] }} b",
    "{% set x = {'a': {'b': [1, (2)]}} %}\n{{ x }}", "{{ f(**{'k': v}) }}", "{{ {'a': 1}}}",
    "{% set d = {'a': 1 %} %}", "{{ '}}' }}", "{{ \"%.3f\"|format(n ** 0.5) }}",
    "{# {{ c }} % — #} t", "{{{ x }}}", "{% include \"p{x}.j2\" %}",
]


def test_raw_blocks_and_brackets_are_read_as_jinjas_lexer_reads_them() -> None:
    """A raw block (its whitespace control and end tag variants) and a ``{{ }}`` or
    ``{% %}`` holding braces or a string with a closer have a key, whose values are the
    lexer's: 299 of the ``real`` shape's 10,687 texts hold a raw block, and every prompt
    of one held-out shape a dict literal (session 21); each took Jinja's lexer."""
    env = TemplateIndex().env
    for source in RAW_AND_BRACES:
        fast = text_shape(env, source)
        assert fast is not None, source
        lexed = _lexed(env, source)
        assert lexed is not None and lexed[1] == fast[1], source


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(["\x00", "\\", "x", "0", "00", "\\x0", "\\x00", "a", "é",
                                 "\u2014", "\U0001f6ab", "\n", "{{ x }}"]),
                max_size=30).map("".join), st.integers(0, 300))
def test_the_nul_test_is_the_old_expression(source: str, pad: int) -> None:
    """textshape._nul answers what ``"\\x00" in source or "\\\\x00" in source`` did, on
    one-byte, two-byte and four-byte strs, the long ones too (CPython searches those
    with memchr)."""
    from promptops.pipeline.textshape import _nul

    for text in (source, "a" * pad + source + "b" * pad, source + "\u2014" * pad):
        assert _nul(text) == ("\x00" in text or "\\x00" in text), repr(text)


def test_a_text_of_many_tags_the_pattern_cannot_read_is_scanned_in_one_pass() -> None:
    """Each tag a dict literal's braces keep from the piece pattern is read by the bracket
    walk; the scan then went on with a *search* for the next piece, which ran past every
    such tag to the end of the source, once per tag: 37,500 ``{{ {} }}`` (300 KB, a
    hostile or generated template) took 100 s in every process that scans a text (build,
    lint, serve's rebuild, a review's workers). Anchored at the next opener it is one
    pass (~0.15 s here); the bound is 50x that, so only the quadratic fails it."""
    env = TemplateIndex().env
    source = "{{ {} }}" * 37_500
    done: list[tuple[tuple[object, ...], list[str], list[object]] | None] = []
    worker = threading.Thread(target=lambda: done.append(literal_shape(env, source)),
                              daemon=True)
    worker.start()
    worker.join(timeout=20)
    assert done, "the scan of 37,500 bracketed tags did not end within 20 s"
    found = done[0]
    assert found is not None
    key, values, _ = found
    assert values == [] and len(key) == 37_500


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(LAYOUT, FILLINGS)
def test_a_kept_scan_is_the_scan_of_any_environment_of_the_syntax(
        layout: list[str | None], fillings: list[tuple[list[str], list[str]]]) -> None:
    """A build's index keeps its scans of sources as written; a review's layout of the
    same source in the standalone mode takes them (kept_shape) and gets what its own
    scan gets; an environment of another syntax (the legacy mode) none."""
    index = TemplateIndex(keep_asts=True)
    envs = [environment({}, "standalone"), environment({}, None), index.env]
    for texts, names in fillings:
        source = _fill(layout, texts, names)
        try:
            index.literal_shape(source)
        except Exception:
            continue
        kept = index.written_scans()
        assert source in kept
        for env in envs:
            assert kept_shape(env, source, kept) == literal_shape(env, source), source


def test_a_kept_scan_is_taken_and_only_one_of_sources_as_written() -> None:
    env = environment({}, "standalone")
    taken = ((1,), ["t"], [])
    assert kept_shape(env, "a {{ x }}", {"a {{ x }}": taken}) is taken  # not scanned again
    rewriting = AstShapes(keep_scans=True)  # its environment rewrites what it scans
    rewriting.scan(env, "a\n{% if x %}\nb\n{% endif %}\n")
    assert rewriting.written_scans() == {}
