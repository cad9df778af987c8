"""The standalone whitespace rule, against the Mustache spec's cases and against real Jinja.

The cases are data (cases/standalone.yaml): the Mustache spec's whitespace tests restated with
Jinja tags, then the edge cases our rule decides. Each renders through real Jinja2 with its
default whitespace settings after ``standalone()``. A property test checks the rewrite against
the rule's plain statement (delete every standalone line, then render), and the rewrite keeps
the author's line numbers for Jinja's error messages.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from jinja2 import Environment, StrictUndefined, TemplateSyntaxError

from promptops.sandbox.whitespace import (
    ENVIRONMENT_OPTIONS,
    StandaloneWhitespace,
    prepare,
    standalone,
    standalone_lines,
)

CASES: list[dict[str, Any]] = yaml.safe_load(
    (Path(__file__).parent / "cases" / "standalone.yaml").read_text(encoding="utf-8"))["cases"]
ENV = Environment(undefined=StrictUndefined, **ENVIRONMENT_OPTIONS)


def render(source: str, data: dict[str, Any] | None = None) -> str:
    return ENV.from_string(standalone(source)).render(**(data or {}))


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_case(case: dict[str, Any]) -> None:
    assert render(case["template"], case.get("data")) == case["expected"]
    if "mustache" in case:  # the only departures from Mustache are Jinja's newline writing
        assert case["mustache"].replace("\r\n", "\n") == case["expected"], case["why"]
    # The rewrite moves whitespace, it never deletes a line: Jinja's line numbers stay true.
    assert standalone(case["template"]).count("\n") == case["template"].count("\n")


def test_cases_cover_the_three_spec_files() -> None:
    prefixes = {c["name"].split(" / ")[0] for c in CASES if " / " in c["name"]}
    assert prefixes == {"sections", "inverted", "comments"}
    assert sum("Standalone" in c["name"] for c in CASES) >= 15


def test_jinja_mode_is_jinja_untouched() -> None:
    source = "a\n{% if x %}\nb\n{% endif %}\n"
    assert prepare(source, "jinja") == source
    assert ENV.from_string(prepare(source, "jinja")).render(x=True) == "a\n\nb\n\n"
    assert ENV.from_string(prepare(source, "standalone")).render(x=True) == "a\nb\n"
    with pytest.raises(ValueError, match="unknown whitespace mode"):
        prepare(source, "trim")  # type: ignore[arg-type]


def test_the_extension_is_the_same_rule() -> None:
    env = Environment(extensions=[StandaloneWhitespace], **ENVIRONMENT_OPTIONS)
    for case in CASES:
        got = env.from_string(case["template"]).render(**case.get("data", {}))
        assert got == case["expected"], case["name"]


def test_errors_name_the_authors_line() -> None:
    source = "a\n{% if x %}\nb\n{% endif %}\n{% for %}\n"
    with pytest.raises(TemplateSyntaxError) as plain:
        ENV.from_string(source)
    with pytest.raises(TemplateSyntaxError) as rewritten:
        ENV.from_string(standalone(source))
    assert plain.value.lineno == rewritten.value.lineno == 5
    assert standalone_lines(source) == [2, 4, 5]


# ---------------------------------------------------------------- the rule, stated plainly

_LINE = st.sampled_from([
    "text", "  indented text", "", "   ", "\t", "{{ v }}", "a {{ v }} b",
    "{% if a %}", "  {% if a %}", "{% if b %}  ", "{% endif %}", "\t{% endif %}",
    "{% if a %}{% endif %}", "x{% if a %}y{% endif %}z", "{# note #}", "  {# note #}  ",
    "{% set s = 1 %}", "{% if a %} {% endif %}", "{{ v }}{% if a %}", "{% if a %}{{ v }}",
])
_STANDALONE = re.compile(r"[ \t]*(?:(?:\{%.*?%\}|\{#.*?#\})[ \t]*)+")


def _balanced(lines: list[str]) -> bool:
    depth = 0
    for line in lines:
        for tag in re.findall(r"\{% (if|endif)", line):
            depth += 1 if tag == "if" else -1
            if depth < 0:
                return False
    return depth == 0


def _by_the_rule(source: str) -> str:
    """Every line holding only block tags and blanks loses its blanks and its newline."""
    lines = source.split("\n")
    kept = []
    for i, line in enumerate(lines):
        ending = "\n" if i < len(lines) - 1 else ""
        if _STANDALONE.fullmatch(line):
            kept.append("".join(re.findall(r"\{%.*?%\}|\{#.*?#\}", line)))
        else:
            kept.append(line + ending)
    return "".join(kept)


@settings(max_examples=300, deadline=None)
@given(st.lists(_LINE, max_size=12).filter(_balanced), st.booleans(), st.booleans(),
       st.booleans())
def test_the_rewrite_is_the_rule(lines: list[str], a: bool, b: bool, last_newline: bool) -> None:
    source = "\n".join(lines) + ("\n" if last_newline and lines else "")
    data = {"a": a, "b": b, "v": "V"}
    expected = ENV.from_string(_by_the_rule(source)).render(**data)
    assert render(source, data) == expected


def _line_by_line(source: str) -> str:
    """The rewrite judging every line on its own (before session 19's runs of whole text
    lines): ``standalone`` must give exactly its output, for any source, well-formed or not."""
    from promptops.sandbox.jinja_source import tokenize
    from promptops.sandbox.whitespace import _is_standalone, _lines, _rewrite

    return "".join(_rewrite(source, line) if _is_standalone(source, line) else
                   "".join(source[a:b] for _, a, b in line)
                   for line in _lines(source, tokenize(source)))


_PIECES = st.sampled_from([
    "text", " ", "\t", "\n", "\r\n", "\r", "{% if a %}", "{% endif %}", "{%- if b -%}",
    "{%+ endif +%}", "{# c #}", "{#\n#}", "{{ v }}", "{% raw %}", "{% endraw %}", "{%",
    "%}", "{#", "#}", "{{", "}}", "{% if a\n and b %}", "-", "+"])


@settings(max_examples=400, deadline=None)
@given(st.lists(_PIECES, max_size=30))
def test_runs_of_text_lines_are_copied_as_the_line_by_line_rewrite_writes_them(
        pieces: list[str]) -> None:
    source = "".join(pieces)
    assert standalone(source) == _line_by_line(source)


def test_a_long_text_with_tags_between_its_lines_is_rewritten_as_line_by_line() -> None:
    source = ("Intro line\nsecond line\n{% if a %}\n  third {{ v }}\nfourth\n  {% endif %}  \n"
              "{% raw %}\n  raw line\n{% endraw %}\nlast line\nno newline at the end")
    assert standalone(source) == _line_by_line(source)
    assert standalone_lines(source) == [3, 6, 7, 9]
