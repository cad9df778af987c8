"""A template's proved output bound lets a render skip counting chunks, never the bound itself.

The render counts each chunk against the reply's output bound before keeping it; for a
template whose output :func:`~promptops.sandbox.outputbound.output_bound` bounds (text, str
variables, loops over written lists, their counts, case filters), the render asks once
whether that bound is within what is left, and if so joins the chunks uncounted (issue
26). The judge is the same compiled template with that question switched off: for every
kind of value (str of every length, case mappings that grow, str subclasses, numbers,
None, containers, missing) and every output bound around the text's length, the same
text or the same error, and the same characters left.
"""

from __future__ import annotations

import copy
import sys
from typing import Any

import pytest
from jinja2 import nodes
from markupsafe import Markup

from promptops.render.template import Compiled
from promptops.sandbox.environment import environment
from promptops.sandbox.limits import Budget, Limits
from promptops.sandbox.outputbound import CASE_GROWTH, output_bound

BOUNDED = [
    "Keep a {{ a }} tone, {{ b }}!",
    "{{ a }}{{ a }}{{ b }}{{ a }}",
    "plain text only",
    "",
    "{{ 'lit' }}: {{ a | upper }} / {{ a | lower }} / {{ a | capitalize }} / "
    "{{ b | upper | lower }}",
    "{% for s in ['outline', 'ﬃx ß', ''] %}{{ loop.index }}. {{ s | capitalize }} {{ a }}.\n"
    "{% endfor %}tail {{ b }}",
    "{% for s in ('x', 'yy') %}{% for t in ['ΐ', 'q'] %}{{ loop.index0 }}{{ t | upper }}"
    "{{ s }}{% endfor %}{{ loop.revindex }}{% endfor %}",
    "{% if a == 'x' %}{{ a }}{{ a }}{% elif b %}{{ b }}{% else %}none{% endif %}",
    "{% for s in ['a', 'b'] %}{{ s }}{% else %}{{ a }}{% endfor %}",
    "{% if a | upper == 'X' and b is defined %}{{ b | capitalize }}{% endif %}!",
]
UNBOUNDED = [
    "{{ a ~ b }}",
    "{{ a * 3 }}",
    "{{ a | center(40) }}",
    "{{ a | upper(1) }}",
    "{{ a | trim }}",
    "{{ a.upper() }}",
    "{{ 5 }}",
    "{% for s in xs %}{{ s }}{% endfor %}",
    "{% for s in ['a', 1] %}{{ s }}{% endfor %}",
    "{% for s in ['a'] if s %}{{ s }}{% endfor %}",
    "{% for s, t in [['a', 'b']] %}{{ s }}{% endfor %}",
    "{{ loop.index }}",
    "{% set a = 'x' * 9 %}{{ a }}",
    "{% macro m() %}x{% endmacro %}{{ m() }}",
    "{% include 'p' %}",
    "{% filter upper %}{{ a }}{% endfilter %}",
    "{% for s in ['a'] %}{{ loop.last }}{% endfor %}",
    "{{ a if b else b }}",
    "{{ self }}{{ a }}",  # the template's reference, not a value named `self`
]
SUB = type("Sub", (str,), {"__str__": lambda self: "longer than it looks " * 3})
VALUES: list[Any] = ["", "x", "tone", "X" * 30, "ß" * 7, "ΐ" * 5, "ﬃ" * 4, "İ" * 3,
                     Markup("<i>"), SUB("s"), 7, None, ["l"], {"k": "v"}]


def _outcome(compiled: Compiled, values: dict[str, Any], bound: int) -> tuple[object, ...]:
    budget = Budget(Limits(max_output_chars=bound))
    try:
        with budget:
            text = compiled.render(dict(values), budget)
    except Exception as exc:
        return type(exc).__name__, str(exc), budget.output_left
    return "ok", text, budget.output_left


def _pair(source: str) -> tuple[Compiled, Compiled]:
    """The template with its bound's question, and the same without (it counts chunks)."""
    fast = Compiled(environment({"p": "partial"}, "jinja").from_string(source))
    general = copy.copy(fast)
    general.within = None
    return fast, general


@pytest.mark.parametrize("source", BOUNDED + UNBOUNDED)
def test_a_bounded_render_gives_what_counting_every_chunk_gives(source: str) -> None:
    fast, general = _pair(source)
    assert (fast.within is not None) == (source in BOUNDED)
    for a in VALUES:
        for b in ("b", "ﬃ" * 2, None, SUB("t")):
            values = {"a": a, "b": b, "xs": ["x" * 5] * 3, "self": ""}
            full = _outcome(general, values, 4_000)
            size = len(full[1]) if full[0] == "ok" else 20
            for bound in {0, 1, 5, 20, size - 1, size, size + 1, 4_000}:
                if bound >= 0:
                    got = _outcome(fast, values, bound)
                    assert got == _outcome(general, values, bound), (source, a, b, bound)


def _proved(source: str) -> tuple[int, tuple[tuple[str, int], ...]] | None:
    """The proved bound, its texts counted in: (fixed, ((name, times), ...))."""
    env = environment({}, "jinja")
    bound = output_bound(env.parse(source), lambda name: getattr(
        env.filters.get(name), "str_growth", None))
    if bound is None:
        return None
    fixed, texts, names = bound
    return fixed + sum(n * len(t) for t, n in texts), names


@pytest.mark.parametrize("source", BOUNDED)
def test_the_proved_bound_holds_for_every_str(source: str) -> None:
    bound = _proved(source)
    assert bound is not None
    fixed, times = bound
    compiled = Compiled(environment({}, "jinja").from_string(source))
    for a in VALUES[:8]:
        for b in VALUES[:8]:
            values = {"a": a, "b": b}
            text = _outcome(compiled, values, 4_000)[1]
            assert isinstance(text, str)
            assert len(text) <= fixed + sum(n * len(values[name]) for name, n in times)


def test_a_bound_counts_each_part_by_what_prints_it() -> None:
    assert _proved("ab{{ a }}{{ b | upper }}{{ a }}") == (2, (("a", 2), ("b", CASE_GROWTH)))
    assert _proved("{% for s in ['xy', 'z'] %}{{ loop.index }}{{ s }}{{ a }}{% endfor %}") \
        == (2 * (1 + 2), (("a", 2),))
    assert _proved("{% if c %}{{ a }}{{ a }}{% else %}{{ b }}xyz{% endif %}") \
        == (3, (("a", 2), ("b", 1)))
    # the texts of every branch (their lengths are the code's constants), the larger literal
    assert _proved("{% if c %}ab{{ 'xyz' }}{% else %}cd{{ 'x' }}{% endif %}") == (2 + 2 + 3, ())
    for source in UNBOUNDED:
        assert _proved(source) is None, source
    assert output_bound(nodes.Template([nodes.ExprStmt(nodes.Const(1))]), lambda n: 1) is None


def test_the_texts_length_is_worked_out_from_the_codes_constants() -> None:
    """Two templates that differ only in their text have the same code but for its string
    constants (the review's shape cache puts one's texts into the other's code)."""
    env = environment({}, "jinja")
    code = env.compile("Hello {{ a }}, and {{ b | upper }}!", raw=True)
    assert "_po_fixed = 0 + sum((len('Hello '), len(', and '), len('!'),))" in code
    assert "_po_fits = environment.fits_test(('a', 'b'), (1, 3))(_po_fixed)" in code
    deferred = env.compile("Hello {{ a }}, and {{ b | upper }}!", raw=True, defer_init=True)
    assert "_po_fixed + len(_pf_0) + 3 * len(_pf_1) <= left" in deferred


def test_templates_of_one_bound_shape_share_the_tests_code() -> None:
    """The test's code is made once per shape (names and times): a compiled template
    holds a closure over its own fixed part, not ~1 KB of code of its own; each still
    answers by its own texts' lengths."""
    env = environment({}, "jinja")
    short = env.from_string("Hi {{ a }}, {{ b | upper }}!").root_render_func.__globals__
    long = env.from_string("Hello there {{ a }}; and {{ b | lower }}?").root_render_func.__globals__
    other = env.from_string("Hi {{ a }} {{ a }}").root_render_func.__globals__
    assert short["_po_fits"].__code__ is long["_po_fits"].__code__
    assert other["_po_fits"].__code__ is not short["_po_fits"].__code__
    parent = {"a": "xy", "b": "z"}
    assert (short["_po_fixed"], long["_po_fixed"]) == (len("Hi , !"), len("Hello there ; and ?"))
    for fits, fixed in ((short["_po_fits"], short["_po_fixed"]),
                        (long["_po_fits"], long["_po_fixed"])):
        need = fixed + 2 + 3 * 1
        assert fits(parent, need) and not fits(parent, need - 1)
        assert not fits({"a": "xy", "b": 5}, 10**6)  # not a str: counted, not proved


def test_no_character_grows_past_the_case_growth() -> None:
    """str.upper, lower and capitalize map each character on its own (the final sigma
    changes a letter, not a length), so the most one character gives bounds a string."""
    most = max(len(f(chr(c))) for c in range(sys.maxunicode + 1)
               for f in (str.upper, str.lower, str.capitalize))
    assert most == CASE_GROWTH
    for text in ("ΐß ﬃİ" * 3, "ΣΑΣ ΣΑΣ", "ǆǅ" * 4):
        for f in (str.upper, str.lower, str.capitalize):
            assert len(f(text)) <= CASE_GROWTH * len(text)


def test_only_the_case_filters_declare_a_growth() -> None:
    filters = environment({}, "jinja").filters
    grown = {name for name, f in filters.items() if getattr(f, "str_growth", None)}
    assert grown == {"capitalize", "upper", "lower"}
