"""A prompt of plain text messages renders through its TextPlan exactly as the general loop.

:class:`~promptops.render.fastpath.TextPlan` renders a prompt whose messages are all plain
user/assistant text (inline or a template file) in a straight loop, without the general
loop's per-message questions. The judge is the general loop itself: every prompt here is
rendered by a renderer that takes the plan and by one made with ``fastpaths=False``, for
good and bad arguments, and the results, the messages' sources and the errors (their type
and every word) must be the same. The prompts that must take the general loop (system
role, ``omitIfBlank``, annotations, other content, history, ``for:``) get no plan.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers.repo import write_files

from promptops.errors import RenderError
from promptops.pipeline.build import Build
from promptops.render.fastpath import TextPlan
from promptops.render.renderer import Renderer

ARGS = "arguments:\n  - {name: topic, required: true}\n  - {name: tone, default: calm}\n"
PLAIN = {
    "inline": "messages:\n  - role: user\n    text: 'Explain {{ topic }} in a {{ tone }} tone.'\n"
              "  - role: assistant\n    text: 'Sure: {{ args.topic | upper }}'\n",
    "file": "messages:\n  - role: user\n    template: templates/ask.j2\n"
            "  - role: user\n    text: 'and {{ topic }}'\n",
    "described": "resultDescription: 'About {{ topic }}'\n"
                 "messages:\n  - role: user\n    text: '{{ topic }}'\n",
    "second_fails": "messages:\n  - role: user\n    text: 'fine {{ topic }}'\n"
                    "  - role: assistant\n    text: '{{ 1 // (topic | length - 1) }}'\n",
    "undefined": "messages:\n  - role: user\n    text: 'before {{ nothing_here }} after'\n",
    "too_long": "messages:\n  - role: user\n    text: 'ok'\n  - role: assistant\n"
                "    text: '{% for i in range(300) %}{{ topic }}{% endfor %}'\n",
    # a proved output bound (tests/sandbox/test_output_bound.py): within what is left
    # or not, the first message filling the reply's 2,000 characters or not
    "bounded": "messages:\n  - role: user\n    text: '{% for i in [\"a\", \"b\", \"c\", \"d\", "
               "\"e\", \"f\", \"g\", \"h\", \"i\", \"j\"] %}{{ topic }}{{ topic }}{% endfor %}'\n"
               "  - role: assistant\n    text: '{{ topic | upper }}{{ tone | upper }}'\n",
    "sets": "messages:\n  - role: user\n    text: '{% set topic = \"changed\" %}{{ topic }}'\n"
            "  - role: assistant\n    text: '{{ topic }} {{ tone }}'\n",
}
GENERAL = {
    "system": "messages:\n  - role: system\n    text: 'You are {{ tone }}'\n"
              "  - role: user\n    text: '{{ topic }}'\n",
    "blank": "messages:\n  - role: user\n    text: '{{ topic }}'\n    omitIfBlank: true\n",
    "annotated": "messages:\n  - role: user\n    text: '{{ topic }}'\n"
                 "    annotations: {audience: [user]}\n",
}
ARGUMENT_SETS: list[Any] = [
    {"topic": "monads"}, {"topic": "x", "tone": "dry"}, {"topic": "é" * 30},
    {}, {"topic": 3}, {"topic": "t", "extra": "no"}, None, "not an object",
    {"topic": "ß" * 45}, {"topic": "ß" * 99}, {"topic": "ß" * 100}, {"topic": "ß" * 101},
]


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root: Path = tmp_path_factory.mktemp("plan")
    files = {f"prompts/{n}.prompt.yaml": ARGS + body for n, body in {**PLAIN, **GENERAL}.items()}
    write_files(root, {"promptops.yaml": "name: plan\nversion: 1.0.0\nlimits:\n"
                       "  maxOutputChars: 2000\n",
                       "templates/ask.j2":
                           "Ask about {{ topic }}{% if tone %} ({{ tone }}){% endif %}",
                       **files})
    return Build(root).bundle


def _outcome(renderer: Renderer, name: str, arguments: Any) -> Any:
    try:
        result, sources = renderer.render(name, arguments)
    except RenderError as exc:
        return type(exc).__name__, str(exc), getattr(exc, "argument", None)
    return result, sources


@pytest.mark.parametrize("name", sorted(PLAIN))
def test_the_text_plan_renders_as_the_general_loop(bundle: Any, name: str) -> None:
    fast, slow = Renderer(bundle), Renderer(bundle, fastpaths=False)
    for arguments in ARGUMENT_SETS * 2:  # twice: the first request compiles, the second not
        assert _outcome(fast, name, arguments) == _outcome(slow, name, arguments), arguments
    assert isinstance(fast._plans[name].texts, TextPlan)  # the path under test was taken
    assert slow._plans[name].texts is None


@pytest.mark.parametrize("name", sorted(GENERAL))
def test_other_prompts_take_the_general_loop(bundle: Any, name: str) -> None:
    assert TextPlan.of(Renderer(bundle).prompts[name]) is None


def test_the_outcomes_are_what_the_format_says(bundle: Any) -> None:
    r = Renderer(bundle)
    texts = [m["content"]["text"] for m in r.get("file", {"topic": "t"})["messages"]]
    assert texts == ["Ask about t (calm)", "and t"]
    assert r.get("described", {"topic": "t"})["description"] == "About t"
    assert [m["content"]["text"] for m in r.get("sets", {"topic": "t"})["messages"]] == [
        "changed", "t calm"]
    with pytest.raises(RenderError, match="message 1 failed to render: ZeroDivisionError"):
        r.get("second_fails", {"topic": "x"})
    with pytest.raises(RenderError, match="the reply is over 2000 characters"):
        r.get("too_long", {"topic": "abcdefgh"})


def test_a_bounded_prompt_takes_its_bound_and_stops_at_the_reply_bound(bundle: Any) -> None:
    r = Renderer(bundle)
    texts = [m["content"]["text"] for m in r.get("bounded", {"topic": "ß" * 45})["messages"]]
    assert texts == ["ß" * 900, "SS" * 45 + "CALM"]
    assert all(c.within is not None for key, c in r._compiled.items() if key[0] == "bounded")
    slow = Renderer(bundle, fastpaths=False)
    slow.get("bounded", {"topic": "ß" * 45})
    assert slow._compiled and all(c.within is None for c in slow._compiled.values())
    with pytest.raises(RenderError, match="the reply is over 2000 characters"):
        r.get("bounded", {"topic": "ß" * 100})  # the first message is all 2,000
