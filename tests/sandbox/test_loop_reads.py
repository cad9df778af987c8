"""The render's inline fast paths give what the general path gives: the same text, the same error.

Three are written out where a ``prompts/get`` spends its Python calls (issue 26):

- ``loop.index`` (any fact of Jinja's own ``LoopContext``) read inline instead of through
  the sandbox's ``getattr``; any other object named ``loop`` still goes through it;
- a printed loop count followed by text (``{{ loop.index }}. ``) joined inline, as
  ``_printed_then``'s int case;
- ``capitalize``, ``upper`` and ``lower`` of a ``str`` as the ``str`` method, without
  Jinja's ``soft_str`` and filter frames, and written inline in the template's code
  (the filter still called for a long result and for anything but a ``str``).

The judge of the first two is the same template compiled without them (Jinja's own
``environment.getattr(...)`` and the ``_pt`` call); of the third, the general bounded
wrapper around Jinja's own filter; of the inline form, the same template calling the filter.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from helpers.templates import with_jinjas
from jinja2 import filters as jinja_filters
from jinja2.compiler import CodeGenerator
from markupsafe import Markup

from promptops.sandbox import codegen as sandbox_env
from promptops.sandbox import filters as safe_filters
from promptops.sandbox.environment import PromptEnvironment, environment
from promptops.sandbox.limits import Budget, BudgetExceeded, Limits

LOOP_TEMPLATES = [
    # every fact the fast path reads, printed alone and followed by text
    *(f"{{% for x in xs %}}{{{{ loop.{a} }}}}|{{{{ loop.{a} }}}}{{% endfor %}}"
      for a in sorted(sandbox_env._LOOP_ATTRIBUTES)),
    "{% for x in xs %}{{ loop.index }}. {{ x | capitalize }} about {{ t }}.\n{% endfor %}",
    "{% for x in xs %}{{ loop.cycle('a', 'b') }}{{ loop.changed(x) }}{% endfor %}",
    "{% for x in xs recursive %}{{ loop.depth }}-{{ loop.depth0 }};{% endfor %}",
    "{% for x in xs %}{% for y in xs %}{{ loop.index }}{% endfor %}{{ loop.index }}{% endfor %}",
    "{% for x in xs if x %}{{ loop.revindex }}.{{ loop.length }}.{% endfor %}",
    # `loop` that is not a LoopContext: undefined, rebound, a dict or a macro argument
    "{{ loop.index }}",
    "{{ loop.index }}.",
    "{% set loop = {'index': 'no'} %}{{ loop.index }}.{{ loop.first }}",
    "{% set loop = 5 %}{{ loop.index }}",
    "{% macro m(loop) %}{{ loop.index }}.{% endmacro %}{{ m({'index': 3}) }}{{ m(none) }}",
    "{% for x in xs %}{{ loop.__class__ }}{% endfor %}",
    "{% for x in xs %}{{ loop._iterator }}{% endfor %}",
    "{% for x in xs %}{{ loop.index * 'ab' }}.{{ loop.nope }}{% endfor %}",
    "{% set outer = [] %}{% for x in xs %}{{ outer.append(loop) or '' }}{% endfor %}"
    "{% for l in outer %}{{ l.index }}{% endfor %}",
]
LOOP_VALUES: list[Any] = [[], ["a"], ["b", "", "c"], [["x"], []], "str", None]


def _general(whitespace: str | None) -> PromptEnvironment:
    """The sandbox's environment with Jinja's own ``visit_Getattr`` (and Jinja's own
    loops, whose ``loop`` is always a ``LoopContext``: test_counted_loops.py judges the
    counted ones)."""
    env: PromptEnvironment = with_jinjas(whitespace, "Getattr", "For")
    return env


def _outcome(render: Any) -> tuple[str, str]:
    try:
        with Budget(Limits(max_output_chars=40)):
            return "ok", render()
    except Exception as exc:
        return type(exc).__name__, str(exc)


@pytest.mark.parametrize("source", LOOP_TEMPLATES)
@pytest.mark.parametrize("whitespace", ["standalone", "jinja", None])
def test_a_loop_read_is_what_the_sandboxs_getattr_gives(
        source: str, whitespace: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    fast = environment({}, whitespace).from_string(source)
    monkeypatch.setattr(sandbox_env, "_counts_loop", lambda node: False)
    general = _general(whitespace).from_string(source)
    monkeypatch.undo()
    for xs in LOOP_VALUES:
        got = _outcome(lambda xs=xs: fast.render(xs=xs, t="T"))
        want = _outcome(lambda xs=xs: general.render(xs=xs, t="T"))
        assert got == want, (source, xs)


def test_the_fast_reads_are_compiled_and_only_for_loop() -> None:
    env = environment({}, "jinja")
    code = env.compile("{% for x in xs %}{{ loop.index }}. {{ loop.last }}{{ x.index }}"
                       "{% endfor %}", raw=True)  # `last`: a LoopContext, not a count
    assert "is LoopContext else environment.getattr(" in code
    assert "(str(_po_v) + '. ') if type(_po_v := " in code  # the printed count
    assert "environment.getattr(l_1_x, 'index')" in code  # not `loop`: the sandbox's own
    general = _general("jinja").compile("{% for x in xs %}{{ loop.index }}{% endfor %}",
                                        raw=True)
    assert "LoopContext else" not in general


def test_the_output_bound_stops_a_loop_count_at_the_same_place() -> None:
    env = environment({}, "jinja")
    tpl = env.from_string("{% for x in xs %}{{ loop.index }}. {% endfor %}")
    with Budget(Limits(max_output_chars=10)) as budget:
        parts: list[str] = []
        left = budget.output_left
        with pytest.raises(BudgetExceeded):
            for chunk in tpl.generate(xs=range(100)):
                left -= len(chunk)
                if left < 0:
                    raise BudgetExceeded("over")
                parts.append(chunk)
    assert parts == ["1. ", "2. ", "3. "]  # one chunk a count and its text, as `_pt` made


TEXTS: list[Any] = ["hello World", "", "ÉTÉ straße ǆ", "x" * 100, Markup("<b>bold</b>"),
                    type("Sub", (str,), {})("sub Class"), 7, 2.5, None, True, ["a", "B"],
                    {"k": "V"}, ("t",), range(3)]


def _general_filter(name: str) -> Any:
    """The general bounded wrapper around Jinja's own filter ``name`` (its fast path off:
    the original handed in behind a function that is not Jinja's)."""
    original = getattr(jinja_filters, f"do_{name}")

    def not_jinjas(*args: Any, **kwargs: Any) -> Any:
        return original(*args, **kwargs)

    table: dict[str, Any] = {name: not_jinjas}
    safe_filters._wrap(table, name, None, text=True)
    return table[name]


def _calls(value: Any) -> Iterator[tuple[tuple[Any, ...], dict[str, Any]]]:
    yield (value,), {}
    yield (value, 1), {}  # Jinja's filter takes one argument: its TypeError
    yield (value,), {"x": 1}


def _filtered(fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any], limit: int) -> Any:
    try:
        with Budget(Limits(max_output_chars=limit)) as budget:
            out = fn(*args, **kwargs)
            return "ok", type(out), out, budget.work_left
    except Exception as exc:  # a TypeError names Jinja's do_<name> in both
        return type(exc).__name__, str(exc)


@pytest.mark.parametrize("name", ["capitalize", "upper", "lower"])
def test_a_str_filter_is_what_jinjas_filter_gives(name: str) -> None:
    fast = environment({}, "jinja").filters[name]
    assert fast.__name__ == "bounded_str"
    general = _general_filter(name)
    assert general.__name__ == "bounded_text"
    for value in TEXTS:
        for args, kwargs in _calls(value):
            for limit in (4_000_000, 50):  # the value bound charged past 64 characters
                got = _filtered(fast, args, kwargs, limit)
                want = _filtered(general, args, kwargs, limit)
                assert got == want, (name, value, args, kwargs, limit)


class _CalledFilters(sandbox_env._BoundedCodeGenerator):
    """The sandbox's code generator with Jinja's own ``visit_Filter``: every filter called."""

    visit_Filter = CodeGenerator.visit_Filter


class _CalledFiltersEnvironment(PromptEnvironment):
    code_generator_class = _CalledFilters


FILTERED = ["{{ a | capitalize }}", "{{ a | upper | lower }}!",
            "[{{ a | lower }}]{{ a | upper }}",
            "{% if a | upper == 'X' %}y{% endif %}", "{{ a | upper(1) }}",
            "{{ (a | lower) ~ 'x' }}", "{% for s in ['ab', a] %}{{ s | capitalize }}{% endfor %}"]


@pytest.mark.parametrize("source", FILTERED)
def test_an_inline_str_filter_is_what_calling_the_filter_gives(source: str) -> None:
    inline = environment({}, "jinja").from_string(source)
    called_env = environment({}, "jinja")
    called_env.__class__ = _CalledFiltersEnvironment
    called = called_env.from_string(source)
    # over 64 characters after the case mapping only ("ß" upper is "SS"), a work bound a
    # charge of ~80 characters passes and one of ~700 does not (max_output_chars=40)
    for a in [*TEXTS, "ß" * 40, "ǆ" * 70, "x" * 700]:
        for limit in (4_000_000, 40):
            got = _outcome_of(lambda t=inline, a=a: t.render(a=a), limit)
            want = _outcome_of(lambda t=called, a=a: t.render(a=a), limit)
            assert got == want, (source, a, limit)
    got = _outcome_of(lambda: inline.render(), 40)  # `a` undefined
    assert got == _outcome_of(lambda: called.render(), 40)


def _outcome_of(render: Any, limit: int) -> tuple[object, ...]:
    try:
        with Budget(Limits(max_output_chars=limit)) as budget:
            return "ok", render(), budget.work_left
    except Exception as exc:
        return type(exc).__name__, str(exc)


def test_the_str_filters_are_written_inline_with_their_call_kept() -> None:
    code = environment({}, "jinja").compile("{{ a | upper }}{{ a | upper(1) }}", raw=True)
    assert "len(_po_r := _po_s.upper()) <= 64 else t_1(_po_s))" in code
    assert "t_1((undefined(name='a') if l_0_a is missing else l_0_a), 1)" in code  # called
