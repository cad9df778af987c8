"""The size a value's text is measured at is never below the real one, and close to it.

An estimate below the real size would let a value slip past the bound; one far above
would refuse renders that fit. Checked against ``repr``, ``json.dumps`` (as ``tojson``
writes it, HTML-safe) and ``pprint`` on generated values, shared parts included.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from jinja2.utils import htmlsafe_json_dumps

from promptops.sandbox.sizing import Walk

text = st.text(max_size=40) | st.text(alphabet="<>&'\"\\\n\t\x01é漢\U0001f600", max_size=300)
leaves = (st.none() | st.booleans() | st.integers() | st.integers(min_value=2**70)
          | st.floats(allow_nan=False, allow_infinity=False) | text)
values = st.recursive(leaves, lambda inner: st.lists(inner, max_size=4)
                      | st.tuples(inner, inner)
                      | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=20)


def shared(value: Any, times: int) -> list[Any]:
    return [value] * times


@settings(max_examples=300, deadline=None)
@given(values, st.integers(1, 30))
def test_the_measured_size_bounds_repr_and_json(value: Any, times: int) -> None:
    for v in (value, shared(value, times), [shared(value, times)] * 3):
        size = Walk(float("inf")).measure(v)[0]
        real = len(repr(v))
        assert real <= size, (v, real, size)
        assert size <= 10 * real + 64, (v, real, size)
        size_json = Walk(float("inf"), json=True).measure(v)[0]
        try:
            dumped = htmlsafe_json_dumps(v, sort_keys=True)
        except TypeError:  # dict keys json refuses: tojson fails the same way
            continue
        assert len(dumped) <= size_json, (v, len(dumped), size_json)
        assert len(json.dumps(v)) <= size_json


def test_a_shared_list_is_measured_by_its_text_not_its_objects() -> None:
    inner = [1] * 100
    value = [[inner] * 100] * 100
    size = Walk(float("inf")).measure(value)[0]
    assert size >= len(repr(value)) == 3_020_200
    assert size < 1.05 * len(repr(value))
