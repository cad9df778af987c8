"""``review.arguments.adapt`` with the same declarations at both ends: every argument is
kept as given, with no note (the shortcut the render workers take for most prompts)."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from promptops.review.arguments import adapt

_NAMES = st.sampled_from(["topic", "mode", "n", "shared_subject"])
_DECL = st.fixed_dictionaries({"name": _NAMES}, optional={
    "required": st.booleans(), "enum": st.lists(st.sampled_from(["a", "b"]), max_size=2)})
_VALUES = st.dictionaries(_NAMES, st.one_of(st.sampled_from(["a", "b", "c"]), st.integers()))


@settings(max_examples=200, deadline=None)
@given(st.lists(_DECL, max_size=4, unique_by=lambda d: d["name"]), _VALUES)
def test_the_same_declarations_keep_every_argument(decls: list[dict[str, Any]],
                                                   values: dict[str, object]) -> None:
    mine: Any = {"name": "p", "arguments": decls, "messages": []}
    other: Any = {"name": "p", "arguments": copy.deepcopy(decls), "messages": []}
    for a, b in ((mine, other), (other, mine), (mine, mine)):
        args, notes = adapt(a, b, values)
        assert (args, notes) == (values, []) and args is not values
