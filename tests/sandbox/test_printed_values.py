"""``{{ value }}`` prints what Jinja's own ``str(environment.finalize(value))`` prints.

The sandbox's code generator writes a printed value as one call (``_p(value)``) instead
of Jinja's two. The judge is the expression Jinja writes, evaluated on the same values
with the same environment: the same text, or the same error, for strings and their
subclasses, small and huge integers, floats, containers, None, undefined names and the
values the sandbox refuses to print (functions: their text holds a memory address).
Outputs inside ``{% autoescape %}`` keep Jinja's own code and still escape.
"""

from __future__ import annotations

from typing import Any

import pytest
from helpers.templates import bounded_outcome
from markupsafe import Markup

from promptops.sandbox.environment import environment
from promptops.sandbox.limits import Budget

VALUES: list[Any] = ["plain", "", "é\u4e2d", Markup("<b>"), 7, -3, 2**70, True, None, 1.5,
                     [1, "a", [None]], {"k": (1, 2)}, (), range(3), len, object()]


def _outcome(fn: Any) -> Any:
    try:
        return "ok", fn()
    except Exception as exc:
        return type(exc).__name__, str(exc)


@pytest.mark.parametrize("value", VALUES, ids=lambda v: type(v).__name__ + repr(v)[:12])
@pytest.mark.parametrize("whitespace", ["standalone", "jinja", None])
def test_a_printed_value_is_what_jinja_would_print(value: Any, whitespace: str | None) -> None:
    env = environment({}, whitespace)
    tpl = env.from_string("[{{ v }}]")
    with Budget():
        got = _outcome(lambda: tpl.render(v=value))
        want = _outcome(lambda: "[" + str(env.finalize(value)) + "]")  # Jinja's expression
    assert got == want


def test_the_one_call_path_is_compiled_and_undefined_still_raises() -> None:
    env = environment({}, "jinja")
    source = env.compile("{{ a }}{% for x in [1] %}{{ x }}{% endfor %}", raw=True)
    assert source.count("_p(") == 2 and "environment.finalize(" not in source
    with Budget(), pytest.raises(Exception, match="'nothing' is undefined"):
        env.from_string("{{ nothing }}").render()


def test_autoescaped_output_keeps_jinjas_code() -> None:
    env = environment({}, "jinja")
    tpl = env.from_string("{% autoescape true %}{{ v }}{% endautoescape %}|{{ v }}")
    with Budget():
        assert tpl.render(v="<b>") == "&lt;b&gt;|<b>"


def test_a_printed_value_and_the_text_after_it_are_one_chunk() -> None:
    """``{{ a }}text`` is one ``_pt(a, 'text')``; text before a value, a value after a
    value and a captured block keep one part each (what runs between two parts is kept)."""
    env = environment({}, "jinja")
    source = env.compile("<{{ a }}, {{ b }}{{ c }}>{% set s %}{{ a }}!{% endset %}", raw=True)
    lines = [line.strip() for line in source.splitlines()]
    assert "yield '<'" in lines  # text before a value: its own chunk
    assert ("yield (_po_v + ', ') if type(_po_v := (undefined(name='a') if l_0_a is missing "
            "else l_0_a)) is str else _pt(_po_v, ', ')") in lines
    assert "yield _p((undefined(name='b') if l_0_b is missing else l_0_b))" in lines
    assert ("yield (_po_v + '>') if type(_po_v := (undefined(name='c') if l_0_c is missing "
            "else l_0_c)) is str else _pt(_po_v, '>')") in lines
    assert "_p((undefined(name='a') if l_0_a is missing else l_0_a))," in lines  # captured
    assert source.count("_pt(") == 2


@pytest.mark.parametrize("value", VALUES, ids=lambda v: type(v).__name__ + repr(v)[:12])
def test_printed_then_is_the_printed_value_and_the_text(value: Any) -> None:
    """The one-chunk form gives the text (or the error) of the two parts, joined."""
    env = environment({}, "jinja")
    with Budget():
        got = _outcome(lambda: env.printed_then(value, "!"))
        want = _outcome(lambda: "".join((env.printed(value), "!")))
    assert got == want and (got[0] != "ok" or type(got[1]) is str)


def _bounded(source: str, bound: int, **values: object) -> tuple[str, str]:
    """``source`` rendered by the renderer's bounded chunk loop under ``bound`` chars."""
    return bounded_outcome(environment({}, "jinja"), source, bound, values)


@pytest.mark.parametrize("bound", range(0, 12))
def test_the_output_bound_holds_at_every_length_across_a_joined_chunk(bound: int) -> None:
    """``ab{{ v }}cde{{ w }}`` (2 + 2 + 3 + 1 characters): under every bound the render
    is whole or refused as too long, exactly as if each part were counted on its own."""
    got = _bounded("ab{{ v }}cde{{ w }}", bound, v="VV", w="W")
    if bound >= 8:
        assert got == ("ok", "abVVcdeW")
    else:
        assert got[0] == "BudgetExceeded" and f"over {bound} characters" in got[1]


def test_text_over_the_bound_is_refused_before_a_later_value_fails() -> None:
    """The text before a value is its own chunk: over the bound, the render stops there,
    as it did part by part, and the undefined value after it is never printed."""
    assert _bounded("{{ v }}" + "x" * 20 + "{{ nothing }}", 10, v="ab")[0] == "BudgetExceeded"
    assert _bounded("{{ v }}x{{ nothing }}", 10, v="ab")[0] == "UndefinedError"


def test_empty_chunks_count_nothing_and_a_later_error_still_raises() -> None:
    """Empty chunks fit a bound of 0 (the counting keeps or drops them alike: no text), an
    empty template renders under any bound, and an error after chunks within the bound is
    the template's error, not a budget's."""
    assert _bounded("{{ v }}{{ w }}", 0, v="", w="") == ("ok", "")
    assert _bounded("", 0) == ("ok", "")
    assert _bounded("{{ v }}{{ w }}x", 0, v="", w="")[0] == "BudgetExceeded"
    assert _bounded("ab{{ nothing }}", 5)[0] == "UndefinedError"


@pytest.mark.parametrize("value", VALUES, ids=lambda v: type(v).__name__ + repr(v)[:12])
def test_a_template_prints_a_value_and_its_text_as_printed_then_does(value: Any) -> None:
    """``{{ v }}!`` in a template (the str case written out, the rest through ``_pt``)
    gives the text or the error ``printed_then`` gives, a str subclass included."""
    env = environment({}, "jinja")
    template = env.from_string("{{ v }}!")
    with Budget():
        got = _outcome(lambda: template.render(v=value))
        want = _outcome(lambda: env.printed_then(value, "!"))
    assert got == want and (got[0] != "ok" or type(got[1]) is str)
