"""Every corpus prompt imports, and renders from the IR exactly as its own engine renders it.

For each entry and each of its realistic input sets: import -> render the IR with plain Jinja2
(tests/interop/ir_render.py) -> compare with the ecosystem's own engine (tests/corpus/judges),
role and text, byte for byte. An entry may carry losses (what the IR cannot express, with the
reason) - but what *can* be rendered must still be identical, and an entry the source engine
refuses must say so in its losses. ``python tests/interop/fidelity.py`` prints the table.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml
from fidelity import EntryResult, arguments_for, entry_files, judges, run, summary
from ir_render import render

ENTRIES = judges.load_manifest()


@pytest.fixture(scope="module")
def results() -> dict[str, EntryResult]:
    return {r.entry["id"]: r for r in run(ENTRIES)}


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["id"] for e in ENTRIES])
def test_entry_renders_as_its_engine(entry: dict[str, Any],
                                     results: dict[str, EntryResult]) -> None:
    r = results[entry["id"]]
    assert r.error is None, r.error
    if r.refused is not None:
        assert any("refuses" in loss.reason for loss in r.losses), (r.refused, r.losses)
    elif not r.losses:  # exact means exact: no loss named, so every rendering is identical
        assert r.mismatches == []
        assert r.compared >= len(entry["inputs"]), "every input set was compared"


def test_every_loss_has_a_reason(results: dict[str, EntryResult]) -> None:
    for r in results.values():
        for loss in r.losses:
            assert loss.what and len(loss.reason) > 20, (r.entry["id"], loss)


def test_the_exact_rate(results: dict[str, EntryResult]) -> None:
    """The share imported with no loss and rendered identically (printed with -s)."""
    done = list(results.values())
    exact = sum(r.exact for r in done)
    print("\n" + summary(done))
    # Every entry that is not exact is so for a stated reason (test above); what is left is
    # inherent to the sources: Claude Code's !`cmd` and @file, files LangChain refuses.
    inherent = sum(1 for r in done if not r.exact and r.losses)
    assert exact + inherent == len(done)


REFUSED = [e for e in ENTRIES if "refuses" in e.get("judge", {}) and e["ecosystem"] == "langchain"]


@pytest.mark.parametrize("entry", REFUSED, ids=[e["id"] for e in REFUSED])
def test_what_langchain_refuses_renders_as_langchain_core_builds_it(
        entry: dict[str, Any], results: dict[str, EntryResult]) -> None:
    """The loader refuses these files, but langchain-core's own classes can still build what
    they evidently mean (the chat list, the template without its output parser): the import
    renders as those do."""
    from langchain_core.prompts import ChatPromptTemplate, PromptTemplate

    main, text, _ = entry_files(entry)
    config = json.loads(text) if main.endswith(".json") else yaml.safe_load(text)
    if config["_type"] == "chat":
        built: Any = ChatPromptTemplate.from_messages(
            [(m["role"], m["content"]) for m in config["template"]]).partial(
            **config.get("partial_variables", {}))
    else:
        built = PromptTemplate(template=config["template"],
                               template_format=config.get("template_format", "f-string"),
                               partial_variables=config.get("partial_variables", {}))
    [prompt] = results[entry["id"]].prompts
    for inputs in entry["inputs"]:
        roles = {"human": "user", "ai": "assistant", "system": "system"}
        want = [{"role": roles[m.type], "text": m.content}
                for m in built.format_prompt(**inputs).to_messages()]
        assert render(prompt, arguments_for(prompt, inputs)) == want
