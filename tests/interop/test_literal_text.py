"""Literal text and Handlebars guards: what the importers and the Dotprompt exporter write.

``jinja_build.literal`` must make Jinja output the author's text byte for byte whatever it
holds (stray ``{{``, ``{%``, ``{#``, ``{% raw %}``, carriage returns), in both whitespace
modes. The Dotprompt exporter's ``_guarded`` must leave no tag that Handlebars' whitespace pass
would treat as standalone, and add nothing but empty comments. Both were rewritten to run in
linear time (``benchmarks/interop_bench.py`` prints the scaling); these properties pin what
the faster code must still do.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from jinja2 import StrictUndefined
from jinja2.sandbox import SandboxedEnvironment

from promptops.interop import handlebars as hb
from promptops.interop import jinja_build
from promptops.interop.exporters import dotprompt as dotprompt_export
from promptops.sandbox.whitespace import ENVIRONMENT_OPTIONS, prepare

ENV = SandboxedEnvironment(undefined=StrictUndefined, autoescape=False, **ENVIRONMENT_OPTIONS)

_PIECES = st.sampled_from(["{", "}", "{{", "}}", "{%", "%}", "{#", "#}", "{% raw %}",
                           "{% endraw %}", "endraw", "x", " ", "\n", "\r", "\r\n", "  ", "-",
                           "+", "'", "\\", "{{ x }}", "{%- if %}"])


@settings(max_examples=400, deadline=None)
@given(st.lists(_PIECES, max_size=30).map("".join), st.sampled_from(["standalone", "jinja"]))
def test_literal_renders_the_text(text: str, mode: str) -> None:
    source = jinja_build.literal(text)
    assert ENV.from_string(prepare(source, mode)).render() == text  # type: ignore[arg-type]


@settings(max_examples=200, deadline=None)
@given(st.lists(_PIECES, max_size=20).map("".join))
def test_literal_before_a_tag_keeps_both(text: str) -> None:
    source = jinja_build.literal(text, before_tag=True) + "{{ v }}"
    assert ENV.from_string(prepare(source, "jinja")).render(v="V") == text + "V"


_HB_LINES = st.sampled_from(["{{#if a}}", "{{/if}}", "{{else}}", "{{#each xs}}", "{{/each}}",
                             "{{! note }}", "{{> part}}", "  {{#if b}}  ", "{{/if}} ",
                             "text", "{{v}}", "", "  "])


def _balanced(lines: list[str]) -> bool:
    return hb_ok("\n".join(lines))


def hb_ok(source: str) -> bool:
    try:
        hb.parse(source)
    except hb.HandlebarsError:
        return False
    return True


@settings(max_examples=300, deadline=None)
@given(st.lists(_HB_LINES, max_size=14).filter(_balanced), st.booleans())
def test_guards_leave_nothing_standalone(lines: list[str], last_newline: bool) -> None:
    source = "\n".join(lines) + ("\n" if last_newline else "")
    guarded = dotprompt_export._guarded(source)
    assert guarded.replace(dotprompt_export.GUARD, "") == source
    assert dotprompt_export._standalone_tags(hb.parse(guarded), guarded) == set()
