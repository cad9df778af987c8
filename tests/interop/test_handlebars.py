"""Handlebars -> Jinja, judged by Dotprompt itself on templates nobody wrote by hand.

The corpus has 17 real Dotprompt files; Handlebars' whitespace rules have more corners than
17 files visit (two tags on a line, a tag beside a role marker, else chains, blocks at the
edges of the template). So this test writes a few hundred random templates from the pieces
Dotprompt prompts are made of, renders each with Google's ``dotprompt`` (one Node process
for all) and with our import, and compares message by message. The seed is fixed so a
failure reproduces; the case is printed.
"""

from __future__ import annotations

import os
import random
import re
from typing import Any

import pytest
from fidelity import judges
from ir_render import render

from promptops.interop import handlebars as hb
from promptops.interop.errors import InteropError
from promptops.interop.importers import dotprompt

_INLINE = ["word", "two words", " ", "  ", "\t", "{{x}}", "{{ x }}", "{{{x}}}", "{{! note }}",
           "{{!-- long note --}}", "\\{{x}}", "{", "}", "{%", "{#", "#}", "%}", "<&>"]
# Inside a loop bare names resolve on the item (a string here), so the root is reached as
# @root.x - a missing field is "" in Handlebars but an error in strict Jinja, which the
# translation documents rather than hides. (../ has its own cases below.)
_LOOP_INLINE = ["{{this}}", "{{@index}}", "{{#if @first}}F{{/if}}", "{{#unless @last}},{{/unless}}",
                "{{@root.x}}", "{{.}}"]
_INPUTS = [{"x": "X", "a": "yes", "b": "", "items": ["p", "q"]},
           {"x": "", "a": "", "b": "1", "items": []}]


def _block(rng: random.Random, depth: int, in_loop: bool) -> str:
    kind = rng.choice(["if", "unless", "each", "ifelse", "chain"] if depth < 3 else ["if"])
    cond = rng.choice(["@root.a", "@root.b", "this"] if in_loop else ["a", "b", "x"])
    items = "@root.items" if in_loop else "items"
    nl = lambda: rng.choice(["", "\n", "  \n", "\n  "])  # noqa: E731
    body = _body(rng, depth + 1, in_loop or kind == "each")
    if kind == "each":
        other = _body(rng, depth + 1, in_loop) if rng.random() < 0.3 else None
        tail = f"{nl()}{{{{else}}}}{nl()}{other}" if other is not None else ""
        return f"{{{{#each {items}}}}}{nl()}{body}{tail}{nl()}{{{{/each}}}}"
    if kind == "ifelse":
        other = _body(rng, depth + 1, in_loop)
        return f"{{{{#if {cond}}}}}{nl()}{body}{nl()}{{{{else}}}}{nl()}{other}{nl()}{{{{/if}}}}"
    if kind == "chain":
        other = _body(rng, depth + 1, in_loop)
        return (f"{{{{#if {cond}}}}}{nl()}{body}{nl()}{{{{else if {cond}}}}}{nl()}{other}{nl()}"
                f"{{{{else}}}}last{nl()}{{{{/if}}}}")
    return f"{{{{#{kind} {cond}}}}}{nl()}{body}{nl()}{{{{/{kind}}}}}"


def _body(rng: random.Random, depth: int, in_loop: bool) -> str:
    pieces = []
    for _ in range(rng.randint(0, 4)):
        r = rng.random()
        if r < 0.25:
            pieces.append(_block(rng, depth, in_loop))
        elif r < 0.45:
            pieces.append(rng.choice(["\n", "\n\n", "\r\n", "  \n"]))
        elif in_loop and r < 0.55:
            pieces.append(rng.choice(_LOOP_INLINE))
        else:
            piece = rng.choice(_INLINE)
            pieces.append(re.sub(r"\bx\b", "@root.x", piece) if in_loop else piece)
    return "".join(pieces)


def _template(rng: random.Random) -> str:
    out = []
    for _ in range(rng.randint(1, 4)):
        if rng.random() < 0.25:
            out.append(rng.choice(['{{role "system"}}', '{{ role "user" }}', '{{role "model"}}']))
        out.append(_body(rng, 0, False))
        out.append(rng.choice(["", "\n", "\n\n"]))
    return "".join(out)


CASES = [_template(random.Random(seed)) for seed in range(int(os.environ.get("HBS_CASES", "600")))]


@pytest.fixture(scope="module")
def engine() -> list[dict[str, Any]]:
    jobs = [{"source": src, "partials": {}, "input": inputs, "messages": None, "context": None}
            for src in CASES for inputs in _INPUTS]
    return judges._run_node("dotprompt_render.js", jobs)


def test_random_templates_render_as_dotprompt(engine: list[dict[str, Any]]) -> None:
    failures = []
    compared = 0
    for n, src in enumerate(CASES):
        try:
            [prompt] = dotprompt.parse("t.prompt", src, {})
        except InteropError as e:
            if "error" not in engine[n * len(_INPUTS)]:
                failures.append((src, f"import failed: {e}"))
            continue
        for k, inputs in enumerate(_INPUTS):
            answer = engine[n * len(_INPUTS) + k]
            if "error" in answer:  # then the import must refuse it too
                failures.append((src, f"dotprompt refuses it, the import does not: "
                                      f"{answer['error'][:200]}"))
                break
            want = [{"role": {"model": "assistant"}.get(m["role"], m["role"]), "text": m["text"]}
                    for m in answer["messages"]]
            values = {a.name: inputs[a.name] for a in prompt.arguments if a.name in inputs}
            try:
                got = render(prompt, values)
            except Exception as e:
                failures.append((src, f"inputs {k}: render failed: {e}\n{prompt.messages}"))
                continue
            compared += 1
            if got != want:
                failures.append((src, f"inputs {k}: ours {got!r}\n   dotprompt {want!r}"))
    assert compared >= len(CASES)
    assert not failures, f"{len(failures)} failures:\n" + "\n\n".join(
        f"template {s!r}\n  {why}" for s, why in failures[:6])


def test_handlebars_errors_have_positions() -> None:
    for source, line, col in [("a\n{{#if x}}\nb", 2, 1), ("x {{/if}}", 1, 3),
                              ("{{#if a}}{{/each}}", 1, 10), ("\n\n  {{{{raw}}}}", 3, 3)]:
        with pytest.raises(hb.HandlebarsError) as e:
            hb.parse(source)
        assert (e.value.line, e.value.col) == (line, col), (source, e.value.message)
    with pytest.raises(InteropError, match=r"t\.prompt:5:1: .*never closed"):
        dotprompt.parse("t.prompt", "---\nmodel: m\n---\n\n{{#if x}}\n", {})


SCOPES = [  # (template, input) pairs for the scope rules, each judged by Dotprompt
    ("{{#each items}}[{{../x}}{{this}}{{@index}}]{{/each}}", {"x": "X", "items": ["p", "q"]}),
    ("{{#each rows as |row i|}}{{i}}={{row.name}}/{{name}};{{/each}}",
     {"rows": [{"name": "a"}, {"name": "b"}]}),
    ("{{#each rows}}{{#each cells}}{{../label}}:{{this}} {{/each}}{{/each}}",
     {"rows": [{"label": "r1", "cells": ["1", "2"]}, {"label": "r2", "cells": []}]}),
    ("{{#with person}}{{name}} ({{../x}}){{else}}nobody{{/with}}",
     {"person": {"name": "Ada"}, "x": "X"}),
    ("{{#with person}}an (empty) person{{else}}nobody{{/with}}", {"person": {}}),
    ("---\ninput:\n  schema:\n    obj: object\n---\n{{#if obj}}obj is truthy{{else}}falsy{{/if}}",
     {"obj": {}}),
    ("{{#if list}}yes{{else}}empty{{/if}}", {"list": ""}),
    ("---\ninput:\n  schema:\n    z: integer\n---\n{{#unless z}}zero is empty{{/unless}}",
     {"z": 0}),
    ("{{#ifEquals a b}}same{{else}}different{{/ifEquals}}", {"a": "1", "b": "1"}),
    ("{{lookup map key}}", {"map": {"k": "v"}, "key": "k"}),
    ("{{items.length}} items", {"items": ["a", "b", "c"]}),
    ("{{#each items}}{{#if @first}}first {{/if}}{{this}}{{#unless @last}}, {{/unless}}{{/each}}",
     {"items": ["a", "b", "c"]}),
]


def test_scopes_render_as_dotprompt() -> None:
    jobs = [{"source": s, "partials": {}, "input": i, "messages": None, "context": None}
            for s, i in SCOPES]
    for (source, inputs), answer in zip(SCOPES, judges._run_node("dotprompt_render.js", jobs),
                                        strict=True):
        [prompt] = dotprompt.parse("t.prompt", source, {})
        got = render(prompt, {a.name: inputs[a.name] for a in prompt.arguments
                              if a.name in inputs})
        want = [{"role": m["role"], "text": m["text"]} for m in answer["messages"]]
        assert got == want, (source, prompt.messages)
