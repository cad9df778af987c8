"""A loop whose body reads only its count iterates ``enumerate``: the same text, the same error.

``{% for step in steps %}{{ loop.index }}. {{ step }}{% endfor %}`` made a Jinja
``LoopContext`` (three Python frames) and resumed it per item (one more each) for the count
alone; the sandbox's code generator now writes such a loop over ``enumerate(steps, 1)``
when the body reads nothing of ``loop`` but ``index``, ``index0`` and ``first`` (issue 26).
The judge is the same template compiled with Jinja's own loop: for every kind of value
looped over (a list, a string, a dict, a range, None, a number, an undefined name, a
generator that fails part way) and every output bound, the same text or the same error.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from helpers.templates import bounded_outcome, with_jinjas
from markupsafe import Markup

from promptops.sandbox.environment import PromptEnvironment, environment

COUNTED = [
    "{% for x in xs %}{{ loop.index }}. {{ x }}\n{% endfor %}",
    "{% for x in xs %}{{ loop.index0 }}|{{ loop.first }}|{{ loop.index }}{% endfor %}",
    "{% for x in xs %}{% if loop.first %}F{% elif loop.index > 2 %}>{% endif %}"
    "{{ loop.index0 * 2 }};{% endfor %}",
    "{% for x in xs %}{{ loop.index }}{% else %}none {{ xs }}{% endfor %}",
    "{% for a, b in xs %}{{ loop.index }}{{ a }}{{ b }} {% endfor %}",
    "{% for x in xs %}{% set y = loop.index ~ x %}{{ y }}{{ [loop.index0, x] }}{% endfor %}",
    "{% for x in xs %}{{ loop.index }}{% endfor %}{{ loop.index }}",  # after: undefined
    "{% for x in xs %}{% for y in x %}{{ loop.index }}{% endfor %}/{% endfor %}",
    "{% for x in xs %}{% for y in x %}{{ loop.index }}{% endfor %}{{ loop.index }}{% endfor %}",
    "{% set n = namespace(c=0) %}{% for x in xs %}{% set n.c = n.c + loop.index %}"
    "{% endfor %}{{ n.c }}",
    "{% for x in xs %}{{ loop.index }}{% set x = 5 %}{{ x }}{% endfor %}",
    "{% for x in xs %}{% set s %}<{{ loop.index }}>{% endset %}{{ s }}{% endfor %}",
    "{% for x in xs %}{{ loop.index | string }}{{ x | upper }}{% endfor %}",
]
# `loop` read otherwise, or seen by a scope of its own: Jinja's LoopContext, as before
NOT_COUNTED = [
    "{% for x in xs %}{{ loop.index }}{{ loop.last }}{% endfor %}",
    "{% for x in xs %}{{ loop.cycle('a', 'b') }}{{ loop.index }}{% endfor %}",
    "{% for x in xs %}{{ loop.length }}{% endfor %}",
    "{% for x in xs if x %}{{ loop.index }}{% endfor %}",
    "{% for x in xs recursive %}{{ loop.index }}{% endfor %}",
    "{% for x in xs %}{{ loop }}{% endfor %}",
    "{% for x in xs %}{% macro m() %}{{ loop.index }}{% endmacro %}{{ m() }}{% endfor %}",
    "{% for x in xs %}{% filter upper %}{{ loop.index }}{% endfilter %}{% endfor %}",
    "{% for x in xs %}{% with y = loop.index %}{{ y }}{% endwith %}{% endfor %}",
]


def _fails_at_two() -> Iterator[str]:
    yield "a"
    yield "b"
    raise ValueError("the third item")


def _values() -> list[Any]:
    return [[], ["a"], ["b", "", "c"], "str", Markup("<b>"), {"k": 1, "j": 2}, range(3),
            [("p", "q"), ("r", "s")], [[1], [], ["u", "v"]], None, 5, _fails_at_two()]


def _jinjas(whitespace: str | None) -> PromptEnvironment:
    """The sandbox's environment with Jinja's own loops (their `loop` a LoopContext)."""
    env: PromptEnvironment = with_jinjas(whitespace, "For")
    return env


@pytest.mark.parametrize("source", COUNTED + NOT_COUNTED)
@pytest.mark.parametrize("whitespace", ["standalone", "jinja"])
def test_a_counted_loop_renders_and_fails_as_jinjas_loop(source: str,
                                                         whitespace: str | None) -> None:
    counted, jinjas = environment({}, whitespace), _jinjas(whitespace)
    for k in range(len(_values()) + 1):
        for bound in (2, 5, 40, 4_000):
            # a fresh value each render (the generator is used up)
            values = {} if k == len(_values()) else {"xs": _values()[k]}
            want = bounded_outcome(jinjas, source, bound, values)
            values = {} if k == len(_values()) else {"xs": _values()[k]}
            got = bounded_outcome(counted, source, bound, values)
            assert got == want, (source, values, bound)


@pytest.mark.parametrize("source", COUNTED)
def test_a_loop_that_reads_only_its_count_is_compiled_without_loop_context(source: str) -> None:
    code = environment({}, "jinja").compile(source, raw=True)
    assert "in enumerate(" in code
    if source.count("{% for") == 1:
        assert "LoopContext(" not in code


@pytest.mark.parametrize("source", NOT_COUNTED)
def test_any_other_use_of_loop_keeps_jinjas_loop_context(source: str) -> None:
    code = environment({}, "jinja").compile(source, raw=True)
    assert "enumerate(" not in code
    assert "LoopContext(" in code
