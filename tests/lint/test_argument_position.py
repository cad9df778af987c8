"""An argument's position read off the text (no re-parse) is the YAML marks' position, or
is not given (the caller then asks the marks): checked on every argument of the real-prompt
corpus and on the forms that must fall back."""

from __future__ import annotations

from pathlib import Path

import pytest

from promptops.lint.rules._common import _block_item_name
from promptops.pipeline.yamlio.loader import YamlProblem, load_yaml

CORPUS = Path(__file__).parent / "corpus" / "package" / "prompts"
PLANTED = Path(__file__).parent / "fixtures" / "planted" / "prompts"


def _marks(text: str, index: int) -> tuple[int, int]:
    return load_yaml("p.prompt.yaml", text.encode()).position(("arguments", index, "name"))


def test_every_corpus_argument_is_placed_as_the_marks_place_it() -> None:
    fast = 0
    for path in sorted(CORPUS.glob("*.prompt.yaml")) + sorted(PLANTED.glob("*.prompt.yaml")):
        text = path.read_text(encoding="utf-8")
        try:
            data = load_yaml(path.name, text.encode()).data
        except YamlProblem:  # planted: a file that does not parse has no arguments to place
            continue
        args = data.get("arguments") or [] if isinstance(data, dict) else []
        for i in range(len(args) if isinstance(args, list) else 0):
            found = _block_item_name(text, i)
            if found is not None:
                fast += 1
                assert found == _marks(text, i), (path.name, i)
    assert fast > 100  # the plain form is what real files use


PLAIN = ("description: d\narguments:\n  - name: topic\n    description: |\n      - name: no\n"
         "  - name: 'style'\n    enum: [a, b]\n    examples:\n      - name: x\nmessages:\n"
         "  - role: user\n    text: hi\n")


@pytest.mark.parametrize("index", [0, 1])
def test_plain_block_items(index: int) -> None:
    assert _block_item_name(PLAIN, index) == _marks(PLAIN, index)


@pytest.mark.parametrize("text", [
    "arguments: [{name: a}]\nmessages: []\n",  # flow style
    "arguments:\n  - description: d\n    name: a\nmessages: []\n",  # name is not the first key
    "arguments:\n  - name: a # a comment\nmessages: []\n",
    "arguments:\n  - name: &x a\nmessages: []\n",
    "arguments:\n  - name:\n      a\nmessages: []\n",
    "arguments:  \n  - name: a\nmessages: []\n",
    "arguments:\r\n  - name: a\r\nmessages: []\r\n",
])
def test_other_forms_fall_back_to_the_marks(text: str) -> None:
    assert _block_item_name(text, 0) is None


def test_an_index_past_the_block_is_not_invented() -> None:
    assert _block_item_name("arguments:\n- name: a\nmessages: []\n", 1) is None
    assert _block_item_name("arguments:\n- name: a\nmessages: []\n", 0) == (2, 9)
