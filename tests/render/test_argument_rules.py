"""ArgumentRules is the one home of "missing required argument": serve's MRTR asks it
which arguments to elicit, and a request without them fails in its ``bind`` with the same
answer (the first missing one in declaration order)."""

from __future__ import annotations

import pytest

from promptops.errors import ArgumentError
from promptops.render.arguments import ArgumentRules

PROMPT = {"name": "p", "messages": [], "arguments": [
    {"name": "b", "required": True}, {"name": "opt"}, {"name": "a", "required": True},
    {"name": "n", "type": "number", "required": True}]}


def _rules() -> ArgumentRules:
    return ArgumentRules(PROMPT, {}, 300)  # type: ignore[arg-type]


@pytest.mark.parametrize(("given", "missing"), [
    ({}, ["b", "a", "n"]), ({"a": "x"}, ["b", "n"]), ({"opt": "x", "n": 1}, ["b", "a"]),
    ({"b": "", "a": "", "n": "1"}, []),
])
def test_missing_is_in_declaration_order_and_bind_reports_the_first(
        given: dict[str, object], missing: list[str]) -> None:
    rules = _rules()
    assert rules.missing(given) == missing
    if missing:
        with pytest.raises(ArgumentError) as err:
            rules.bind(given)
        assert str(err.value) == f"missing required argument {missing[0]!r} for prompt 'p'"
        assert err.value.argument == missing[0]
    else:
        assert rules.bind(given) == {"b": "", "opt": "", "a": "", "n": 1,
                                     "args": {"b": "", "opt": "", "a": "", "n": 1}}
