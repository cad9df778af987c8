"""The sandbox's lexer hands the parser exactly the tokens Jinja's own lexer does, and the
template index skips only parses that could say nothing.

``promptops.sandbox.lexing.ScanningLexer`` rewrites the rule that finds the text before the
next tag so it skips plain text in runs (issue 26 item 1, session 10). Whatever the text,
the tokens (line, type, value) and any error must be Jinja's: checked on every file of the
speed corpus's tuning part, on edge texts and on random texts made of the characters the
rule cares about, in each whitespace mode's environment.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jinja2 import TemplateSyntaxError
from jinja2.lexer import Lexer

from promptops.pipeline.templates import TemplateIndex, references_in, tag_free
from promptops.sandbox import lexing
from promptops.sandbox.environment import environment
from promptops.sandbox.nesting import parse

TUNING = Path(__file__).parent.parent / "corpus" / "speed" / "tuning"
MODES = ("jinja", "standalone", None)


def outcome(lexer: Lexer, text: str) -> tuple[object, ...]:
    try:
        return ("ok", [(t.lineno, t.type, t.value) for t in lexer.tokenize(text)])
    except Exception as exc:  # the error itself is what is compared
        return ("error", type(exc).__name__, str(exc), getattr(exc, "lineno", None))


def same(mode: str | None, text: str) -> tuple[object, ...]:
    env = environment({}, whitespace=mode)
    got = outcome(env.lexer, text)
    assert got == outcome(Lexer(env), text), (mode, text)
    return got


EDGES = [
    "", "plain text", "{", "{{", "{%", "{#", "}", "{{ a }}", "{{a}}{{b}}", "{ {{ x }} }",
    "{{{ x }}}", "a {%- if x -%} b {%+ endif %} c", "  {% if x %}\n  y\n  {% endif %}\n",
    "{# c #}", "{#- c -#}  x", "{# unclosed", "{{ unclosed", "{% raw %}{{ x }}{% endraw %}",
    "{%- raw -%} {{ y }} {%- endraw -%}", "{% raw %} no end", "a\r\nb\rc\n{{ x }}\r\n",
    "x {{ 'a\r\nb' }} y", "{{ {'a': 1} }}", "{% set x = {'a': {'b': 1}} %}{{ x }}",
    "{{ x }}\n" * 50, "{" * 40 + "x", "text {\n{% if %}", "{{ x | f }}{%", "{%%}{{}}{##}",
    "é {{ ünï }} ✓ {% for a in b %}{{ a }}{% endfor %}",
]


@pytest.mark.parametrize("mode", MODES)
def test_edge_texts_lex_as_jinja_lexes_them(mode: str | None) -> None:
    kinds = {same(mode, text)[0] for text in EDGES}
    assert kinds == {"ok", "error"}  # both outcomes exercised


def test_every_tuning_file_lexes_as_jinja_lexes_it() -> None:
    files = [p for p in sorted(TUNING.rglob("*")) if p.is_file()]
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in files]
    assert sum("{{" in t or "{%" in t for t in texts) > 20  # the corpus has templates
    for text in texts:
        same("jinja", text)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="{}%#-+ \n\r\tarwendifx'\"()[]", max_size=60),
       st.sampled_from(MODES))
def test_random_texts_lex_as_jinja_lexes_them(text: str, mode: str | None) -> None:
    same(mode, text)


def test_the_sandbox_lexes_with_the_run_scanning_rule() -> None:
    lexer = environment({}, whitespace="jinja").lexer
    assert isinstance(lexer, lexing.ScanningLexer)
    assert lexer.rules["root"][0].pattern.pattern.startswith(lexing._RUNS)


def test_other_delimiters_keep_jinjas_rule() -> None:
    env = environment({}, whitespace="jinja").overlay(block_start_string="<%",
                                                      block_end_string="%>")
    lexer = lexing.ScanningLexer(env)
    assert lexer.rules["root"][0].pattern.pattern.startswith(lexing._JINJA_TEXT)
    assert outcome(lexer, "a <% if x %>b<% endif %> {{ c }}") == \
        outcome(Lexer(env), "a <% if x %>b<% endif %> {{ c }}")


def _parsed_references(text: str) -> tuple[object, ...]:
    """What a parse says: the references of the AST, or the error."""
    try:
        return ("ok", references_in(parse(environment({}, whitespace="jinja"), text)))
    except TemplateSyntaxError as exc:
        return ("error", exc.message, exc.lineno)


def _index_references(text: str) -> tuple[object, ...]:
    try:
        return ("ok", TemplateIndex().references(text))
    except TemplateSyntaxError as exc:
        return ("error", exc.message, exc.lineno)


def test_the_index_skips_no_parse_that_could_say_something() -> None:
    """A text without a tag is not parsed and one without `include`, `import` or `extends`
    is not walked for references (``TemplateIndex.references``): both must say what the
    parse says, on the tuning files and on edge texts."""
    files = [p for p in sorted(TUNING.rglob("*")) if p.is_file()]
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in files] + EDGES + [
        "{% include 'a.j2' %}", "{% from 'm.j2' import x %}{{ x() }}", "{% extends 'b' %}",
        "{% import 'c' as c %}", "{% include name %}", "plain { text } with {braces}",
        "{ { x } }", "% { # }"]
    outcomes = [(_index_references(t), _parsed_references(t)) for t in texts]
    assert all(got == want for got, want in outcomes), [
        (t, o) for t, o in zip(texts, outcomes, strict=True) if o[0] != o[1]]
    assert any(want[0] == "ok" and want[1] for _, want in outcomes)  # references found
    assert sum(tag_free(t) for t in texts) > 10  # the shortcut taken


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="{}%#-+ \nincludeimportxtsfrom'\"", max_size=40))
def test_random_texts_have_the_references_a_parse_finds(text: str) -> None:
    assert _index_references(text) == _parsed_references(text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="{}%#- \n\r\tax", max_size=40), st.booleans())
def test_a_source_is_not_split_into_lines_yet_lexes_as_jinja_lexes_it(text: str,
                                                                      keep: bool) -> None:
    """``tokeniter`` reads :class:`lexing._Breaks` for its line split: a source without
    ``\\r`` handed back whole (less its final ``\\n``), with or without
    ``keep_trailing_newline``, must give Jinja's tokens and errors."""
    env = environment({}, whitespace="jinja").overlay(keep_trailing_newline=keep)
    lexer = lexing.ScanningLexer(env)
    for source in (text, text + "\n", text + "\n\n", text.replace("\r", "")):
        assert outcome(lexer, source) == outcome(Lexer(env), source), (keep, source)


def test_the_split_gives_jinjas_lines_back_only_where_they_join_to_the_source() -> None:
    assert lexing._Breaks.split("a\nb\n") == ["a\nb", "\n", ""]
    assert lexing._Breaks.split("a\nb") == ["a\nb"]
    assert lexing._Breaks.split("a\r\nb") == ["a", "\r\n", "b"]
    assert lexing.ScanningLexer.tokeniter.__code__ is Lexer.tokeniter.__code__


def test_includes_from_the_parses_references_are_the_scanned_sources() -> None:
    """``TemplateIndex.includes`` takes the references the parse kept before looking for
    ``{%``: the same answer as an index that parsed nothing yet (edge texts, the tuning
    files, includes inside and outside the package, a source that does not parse)."""
    files = [p for p in sorted(TUNING.rglob("*")) if p.is_file()]
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in files] + EDGES + [
        "{% include 'a.j2' %}", "{% include '../out.j2' %}{% include x %}",
        "{%- from 'm/n.j2' import y -%}", "{{ include }} 'a.j2'", "{% include 'b.j2'"]
    parsed = TemplateIndex(keep_asts=True)
    for text in texts:
        with contextlib.suppress(TemplateSyntaxError):
            parsed.references(text)
    found = [parsed.includes(t) for t in texts]
    assert found == [TemplateIndex().includes(t) for t in texts]
    assert sum(bool(f) for f in found) >= 2
