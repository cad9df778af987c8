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


LIMITED = {"name": "q", "messages": [], "arguments": [
    {"name": "topic", "required": True, "maxLength": 5}, {"name": "tone", "default": "calm"},
    {"name": "pick", "enum": ["x", "y"]}, {"name": "code", "pattern": "[a-z]+"},
    {"name": "n", "type": "number"}, {"name": "args"}]}
GIVEN: list[object] = [
    None, {}, {"topic": "abc"}, {"topic": "abcde"}, {"tone": "loud", "topic": "abc"},
    {"topic": "abcdef"},
    {"topic": "abc", "tone": 3}, {"tone": ["l"], "topic": "abcdefg"}, {"topic": "a", "pick": "x"},
    {"topic": "a", "pick": "z"}, {"topic": "a", "code": "AB"}, {"topic": "a", "n": "2"},
    {"topic": "a", "args": "mine"}, {"topic": "a", "nope": "1"}, {"nope": 1, "topic": 2},
    {"topic": "abcdef", "tone": "x" * 10_001}, {"topic": "", "tone": ""}, ["topic"],
]


def _bound(rules: ArgumentRules, given: object) -> object:
    try:
        context = rules.bind(given)
    except ArgumentError as exc:
        return "error", str(exc), exc.argument
    return list(context.items()), list(context["args"].items())  # the order too


@pytest.mark.parametrize("given", GIVEN, ids=repr)
def test_bind_of_plain_strings_is_the_declaration_order_loops(given: object) -> None:
    """bind's fast path (every given argument a plain string within its limit) gives the
    context, key order included, and the error the declaration-order loop gives."""
    fast = ArgumentRules(LIMITED, {}, 300)  # type: ignore[arg-type]
    general = ArgumentRules(LIMITED, {}, 300)  # type: ignore[arg-type]
    general.plain_set = frozenset()  # never taken: the loop binds every request
    assert fast.plain_set == {"topic", "tone", "args"}
    assert _bound(fast, given) == _bound(general, given)
