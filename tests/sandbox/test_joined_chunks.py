"""A leading text and the variables each followed by text are one chunk when all are str.

``Keep a {{ tone }} tone, ... If {{ topic }} is ...`` was three chunks, each counted by the
render's loop before the template went on; the sandbox's code generator now yields it as
one when ``tone`` and ``topic`` are str (issue 26). The judge is the same template compiled
without the join: for every kind of value and every output bound (one that cuts the text
before a variable, one that cuts the variable, none), the same text or the same error.
"""

from __future__ import annotations

from typing import Any

import pytest
from helpers.templates import bounded_outcome
from markupsafe import Markup

from promptops.sandbox import codegen as sandbox_env
from promptops.sandbox.environment import environment

TEMPLATES = [
    "Keep a {{ a }} tone.",
    "Keep a {{ a }} tone, and {{ b }}!",
    "{{ a }}, {{ b }}.",
    "{{ a }}{{ b }}.",  # a value right after a value: not joined
    "x{{ a }}",  # no text after the variable
    "head {{ a }} mid {{ a | upper }} tail {{ b }} end",  # a filter breaks the run
    "{% for i in [1, 2] %}<{{ a }}>{{ loop.index }}({{ b }}){% endfor %}",
    "{% set s %}pre {{ a }} post {{ b }}.{% endset %}[{{ s }}]",
    "{% macro m(v) %}m: {{ v }}; {{ a }}.{% endmacro %}{{ m(b) }}|{{ m(a) }}",
    "{% if a %}yes {{ a }} and {{ b }}{% else %}no {{ b }}.{% endif %}",
    "{% set a = a ~ '!' %}start {{ a }} then {{ nope }} end",
]
VALUES: list[Any] = ["tone", "", "x" * 30, Markup("<i>"), type("S", (str,), {})("sub"), 7,
                     None, ["l", 1], {"k": "v"}, len]


@pytest.mark.parametrize("source", TEMPLATES)
def test_a_joined_run_renders_and_fails_as_its_parts(source: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    joined = environment({}, "jinja")
    monkeypatch.setattr(sandbox_env, "_joinable", lambda body, start: ([], start))
    parts = environment({}, "jinja")
    for a in VALUES:
        for b in ("b", 3, None):
            values = {"a": a, "b": b}
            for bound in (3, 8, 12, 20, 40, 4_000):
                want = bounded_outcome(parts, source, bound, values)
                monkeypatch.undo()
                got = bounded_outcome(joined, source, bound, values)
                monkeypatch.setattr(sandbox_env, "_joinable", lambda body, start: ([], start))
                assert got == want, (source, a, b, bound)


def test_only_text_and_plain_variables_are_joined() -> None:
    env = environment({}, "jinja")
    code = env.compile("Keep a {{ a }} tone, {{ b }}!{{ c | upper }} x {{ d }}", raw=True)
    assert "is str and type(_po_1 := " in code
    assert "yield 'Keep a ' + _po_0 + ' tone, ' + _po_1 + '!'" in code
    assert "_po_2" not in code  # after the filter, a run of one variable: not joined
    body = env.compile("{% set s %}a {{ b }} c{% endset %}{{ s }}", raw=True)
    assert "_po_0" not in body  # a captured block keeps Jinja's parts
