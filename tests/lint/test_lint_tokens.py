"""The token stream lint judges is exactly Jinja's own lexer's (issue 26, session 10).

Lint's rendered-text rules (PO504 trailing whitespace, PO506 tabs) judge the environment's
token stream (``env.lex``), which the sandbox's lexer (promptops.sandbox.lexing, without
Jinja's per-character scan of plain text) makes; it must not change a token, a line number
or an error, or a finding moves. Each source is lexed both ways in every whitespace mode
the renderer has; tests/pipeline/test_lexing.py holds the parser's view of the same lexer.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from jinja2 import Environment, TemplateSyntaxError
from jinja2.lexer import Lexer

from promptops.sandbox.environment import PromptEnvironment, environment
from promptops.sandbox.lexing import ScanningLexer

REPO = Path(__file__).resolve().parent.parent.parent
MODES = ("standalone", "jinja", None)

TRICKY = [
    "", "plain", "plain\n", "a\r\nb\rc\n", "{", "}", "{ {", "{{", "{%", "{#", "x {",
    "{{ a }}", "a {{- b -}} c", "a {{+ b }}", "  {% if x %}\n  y\n  {% endif %}\n",
    "  {%- if x -%} y {%+ endif %}", "{# c #}{#- d -#}", "{% raw %}{{ x }}{% endraw %}",
    "{%- raw -%} {% x {% endraw %}", "{{ '{%' }} {{ \"}}\" }}", "{ {% x %} {",
    "{{ a", "{% if %}", "{# open", "{% raw %} no end", "a\t \n{{ b }}\t\n", "{{{ x }}}",
    "%} }} #}", "{%%}", "{{}}", "{##}", "é{{ ü }}\u2028x\u0085y", "{{ x }}" * 50,
    "text " * 2000 + "{{ a }}" + " more" * 2000,
]


def _both(env: Environment, source: str) -> tuple[object, object]:
    def run(lex: object) -> object:
        try:
            return list(lex(source))  # type: ignore[operator]
        except TemplateSyntaxError as err:
            return ("error", str(err), err.lineno)
    fast = (env.lex if isinstance(env, PromptEnvironment)
            else lambda s: ScanningLexer(env).tokeniter(s, None))
    return run(lambda s: Lexer(env).tokeniter(s, None)), run(fast)


@pytest.mark.parametrize("mode", MODES)
def test_tricky_sources_lex_the_same(mode: str | None) -> None:
    env = environment({}, mode)
    for source in TRICKY:
        want, got = _both(env, source)
        assert got == want, source


@pytest.mark.parametrize("mode", MODES)
def test_random_sources_lex_the_same(mode: str | None) -> None:
    """Random text over the characters that make and break tags: 3,000 sources a mode."""
    env = environment({}, mode)
    rng = random.Random(26)
    alphabet = ["{", "}", "%", "#", "-", "+", " ", "\t", "\n", "\r", "a", "raw", "end",
                "'", '"', "x", "{{", "{%", "{#", "%}", "}}", "#}"]
    errors = 0
    for _ in range(3000):
        source = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        want, got = _both(env, source)
        assert got == want, repr(source)
        errors += isinstance(want, tuple)
    assert 100 < errors < 2900  # both kinds were judged


def test_the_corpora_lex_the_same() -> None:
    """Every text file of the prompt corpora (not the held-out parts, which are only
    measured), lexed both ways in the default mode."""
    env = environment({}, "standalone")
    files = [p for root in (REPO / "tests" / "corpus", REPO / "tests" / "lint" / "corpus")
             for p in root.rglob("*") if p.is_file() and "heldout" not in p.parts
             and p.suffix not in (".py", ".pyc")]
    judged = 0
    for path in files:
        try:
            source = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        want, got = _both(env, source)
        assert got == want, path
        judged += 1
    assert judged > 500


def test_other_delimiters_and_line_statements_lex_the_same() -> None:
    for env in (Environment(block_start_string="<%", block_end_string="%>",
                            variable_start_string="<<", variable_end_string=">>",
                            comment_start_string="<#", comment_end_string="#>"),
                Environment(line_statement_prefix="#", line_comment_prefix="##")):
        for source in ["<% if x %>a<< y >><# c #>%", "# for x in y\n{{ x }}\n## c\n# endfor",
                       "<<", "a < b << c >>", *TRICKY]:
            want, got = _both(env, source)
            assert got == want, source
