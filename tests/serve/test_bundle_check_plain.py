"""The load check's quick answers for plain arguments agree with its full pass.

``bundle_check.valid`` settles the usual argument (a string without a schema) and the
usual name (printable ASCII) without the general checks; the judge is the rule-by-rule
pass (``_Check``), which reports each problem in words, on a real built bundle whose
first argument is changed in every way that touches those shortcuts.
"""

from __future__ import annotations

import contextlib
import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

from promptops.pipeline import bundle_check, bundle_shapes
from promptops.pipeline.bundle_types import ARG_NAME_RE

NAMES = ["topic", "a-b.c_d", "x" * 128, "x" * 129, "", "tab\there", "nul\x00", "unit\x1f",
         "del\x7f", "c1\x80", "caf\u00e9", "\u4e2d\u6587", "emoji\U0001f600", " ", "~"]
DEFAULTS: list[Any] = ["neutral", "", 3, 2.5, True, None, ["a"], {"k": "v"}]
SHAPES: list[dict[str, Any]] = [
    {}, {"type": "string"}, {"type": "integer"}, {"type": "boolean"},
    {"schema": {}}, {"schema": {"minLength": 2}}, {"schema": {"unknownKeyword": 1}},
    {"type": "string", "schema": {"enum": ["neutral"]}}, {"type": "nonsense"},
]


def _full_pass_agrees(bundle: dict[str, Any]) -> bool:
    fast = bundle_check.valid(bundle)
    check = bundle_check._Check(bundle)
    with contextlib.suppress(bundle_check._Found):
        check.run()
    assert fast == (not check.problems), check.problems
    return fast


def _with_argument(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    bundle = copy.deepcopy(base)
    prompt = next(p for p in bundle["prompts"] if p["arguments"])
    arg = prompt["arguments"][0]
    for key in ("schema", "type", "default"):
        arg.pop(key, None)
    arg.update(changes)
    return bundle


@pytest.fixture
def base(kit_bundle: Path) -> dict[str, Any]:
    bundle: dict[str, Any] = json.loads(kit_bundle.read_bytes())
    assert _full_pass_agrees(bundle)
    return bundle


def test_argument_names(base: dict[str, Any]) -> None:
    accepted = {name for name in NAMES
                if _full_pass_agrees(_with_argument(base, name=name))}
    assert accepted == {"topic", "a-b.c_d", "x" * 128, "c1\x80", "caf\u00e9", "\u4e2d\u6587",
                        "emoji\U0001f600", " ", "~"}


@pytest.mark.parametrize("shape", SHAPES, ids=json.dumps)
def test_defaults_of_every_kind_of_argument(base: dict[str, Any], shape: dict[str, Any]) -> None:
    outcomes = {json.dumps(d): _full_pass_agrees(_with_argument(base, **shape, default=d))
                for d in DEFAULTS}
    if shape in ({}, {"type": "string"}, {"schema": {}}):  # the plain argument
        assert outcomes == {json.dumps(d): isinstance(d, str) for d in DEFAULTS}


def test_the_quick_argument_name_test_is_the_pattern() -> None:
    """``_arg_name`` answers printable ASCII without the table's pattern; it must say what
    the pattern (``ARG_NAME_RE``, the model's and the JSON Schema's) says of every name."""
    pattern = re.compile(ARG_NAME_RE)
    names = [*NAMES, *(chr(c) * n for c in range(0x2000) for n in (1, 128, 129)),
             "x\n", "\n", "a" * 127 + "\x00"]
    for name in names:
        assert bundle_shapes._arg_name(name) == bool(pattern.fullmatch(name)), repr(name)
