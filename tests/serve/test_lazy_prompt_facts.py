"""Facts about a prompt's messages that serve's start no longer walks every prompt for.

Two walks over every message of every prompt ran at each start (issue 26, session 7): the
catalog's ``Entry.shaped`` (``any()`` over a generator, now a plain loop) and the renderer's
set of prompts with ``for:`` messages (now ``_Plan.looped``, made on a prompt's first
request). The judge of each is the expression it replaced, kept here as it was, over every
message kind and the keys that decide it.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from promptops.render.renderer import Renderer
from promptops.serve.catalog import _SHAPED, _shaped

KINDS = ["text", "image", "audio", "resource", "resource_link", "history"]
EXTRAS: list[dict[str, Any]] = [{}, {"role": "user"}, {"role": "assistant"},
                                {"role": "system"}, {"annotations": {"priority": 1}},
                                {"loopOver": "xs", "loopItem": "x"}]


def old_shaped(prompt: dict[str, Any]) -> bool:
    """``Entry.shaped`` as it was computed before."""
    return any(m["type"] in _SHAPED or "annotations" in m or m["type"] == "history"
               or m.get("role") == "system" for m in prompt["messages"])


def messages() -> list[dict[str, Any]]:
    return [{"type": kind, **extra} for kind in KINDS for extra in EXTRAS]


@pytest.mark.parametrize("count", [0, 1, 2, 3])
def test_shaped_says_what_the_generator_said(count: int) -> None:
    pool = messages()
    seen = set()
    for combo in itertools.product(pool, repeat=count) if count < 3 else (
            pool[i:i + 3] for i in range(len(pool) - 2)):
        prompt = {"messages": list(combo)}
        seen.add(_shaped(prompt))  # type: ignore[arg-type]
        assert _shaped(prompt) is old_shaped(prompt), prompt  # type: ignore[arg-type]
    assert seen == ({False} if count == 0 else {True, False})


def test_looped_is_known_per_prompt_as_the_set_knew_it() -> None:
    """The plan's ``looped`` against the renderer-wide set it replaced, for prompts with
    and without ``for:`` messages (a loop anywhere in the prompt counts)."""
    prompts = []
    for i, pattern in enumerate([(), (0,), (1,), (0, 1)]):
        msgs: list[dict[str, Any]] = [{"type": "text", "role": "user", "text": f"m{j}"}
                                      for j in range(2)]
        for j in pattern:
            msgs[j] = {**msgs[j], "loopOver": "xs", "loopItem": "x"}
        prompts.append({"name": f"p{i}", "arguments": [
            {"name": "xs", "type": "array", "required": False}], "messages": msgs})
    bundle: Any = {"prompts": prompts, "templates": {}, "resources": {},
                   "package": {"name": "t", "version": "1.0.0"}}
    renderer = Renderer(bundle)
    before = frozenset(p["name"] for p in prompts
                       if any("loopOver" in m for m in p["messages"]))
    for p in prompts:
        assert renderer._plan(p["name"]).looped is (p["name"] in before)
    assert len(before) == 3


def test_an_entry_knows_shaped_on_first_ask_and_a_swap_keeps_what_it_knew() -> None:
    """``Entry.shaped`` is worked out when a get first asks, not for every prompt at start;
    the next snapshot's entry of the same prompt object takes what the last one knew."""
    from promptops.serve.catalog import Entry

    plain: Any = {"messages": [{"type": "text", "role": "user", "text": "x"}]}
    system: Any = {"messages": [{"type": "text", "role": "system", "text": "x"}]}
    for prompt, want in ((plain, False), (system, True)):
        entry = Entry(prompt, 0)
        assert entry.known is None
        assert entry.shaped is want and entry.known is want
        again = Entry(prompt, 0, shaped=entry.known)
        assert again.known is want
