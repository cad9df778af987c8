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
