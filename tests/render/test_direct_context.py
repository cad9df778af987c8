"""The renderer's own context for a template renders as Jinja's ``new_context`` does.

:class:`~promptops.render.fastpath.DirectTemplate` fills a template's context in directly
(no ``new_context``, no ``EvalContext.__init__``); ``fastpath.prepare`` chooses it when the
template has no blocks and Jinja's ``Context`` is still made of the attributes it knows.
The judge is Jinja's own path: every prompt here,
which uses what a context carries (top-level sets and their export, macros and
``caller``, ``import ... with context``, includes that read the caller's variables,
namespaces, filter blocks, the strict undefined's error), is rendered by a renderer
whose templates take the direct path and by one made with ``fastpaths=False`` (the
general path only), and the results (or the errors) must be the same.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pytest
from helpers.repo import write_files

from promptops.errors import RenderError
from promptops.pipeline.build import Build
from promptops.render.fastpath import DirectTemplate
from promptops.render.renderer import Renderer
from promptops.render.template import Compiled

PROMPTS = {
    "sets": "{% set x = topic ~ '!' %}{% set y %}[{{ x }}]{% endset %}{{ x }} {{ y }}",
    "macros": "{% macro m(a) %}<{{ a }}|{{ caller() }}>{% endmacro %}"
              "{% call m(topic) %}inner {{ topic }}{% endcall %}",
    "imports": "{% import 'partials/macros.j2' as mm with context %}{{ mm.shout() }}"
               "{% from 'partials/macros.j2' import plain %}{{ plain('p') }}",
    "includes": "{% set local = 'here' %}{% include 'partials/inc.j2' %}",
    "namespace": "{% set ns = namespace(n=0) %}{% for i in range(4) %}{% set ns.n = ns.n + i %}"
                 "{{ loop.index }}{% endfor %}={{ ns.n }} {{ range(3) | list }}",
    "filters": "{% filter upper %}{{ topic }} {{ tone }}{% endfilter %} {{ args.topic }}",
    "undefined": "before {{ nothing_here }} after",
    "blocks": "{% extends 'partials/base.j2' %}{% block b %}child {{ topic }}{% endblock %}",
    "shadows": "{% set topic = 'changed' %}{% set tone = tone ~ '!' %}{{ topic }} {{ tone }}",
}
FILES = {
    "partials/macros.j2": "{% macro shout() %}{{ topic | upper }}{% endmacro %}"
                          "{% macro plain(v) %}({{ v }}){% endmacro %}",
    "partials/inc.j2": "included {{ topic }} {{ local }}",
    "partials/base.j2": "base [{% block b %}default{% endblock %}]",
}


def _package(root: Path) -> Path:
    prompts = {}
    for name, text in PROMPTS.items():
        prompts[f"prompts/{name}.prompt.yaml"] = (
            "arguments:\n  - {name: topic, required: true}\n  - {name: tone, default: calm}\n"
            f"messages:\n  - role: user\n    text: {text!r}\n"
            "  - role: assistant\n    text: 'second {{ topic }}'\n")
    write_files(root, {"promptops.yaml": "name: ctx\nversion: 1.0.0\n", **prompts, **FILES})
    return root


def _outcome(renderer: Renderer, name: str) -> Any:
    with contextlib.suppress(RenderError):
        renderer.get(name, {"topic": "t"})  # compiles the prompt's templates
    try:
        return renderer.get(name, {"topic": "t"})
    except RenderError as exc:
        return type(exc).__name__, str(exc)


def _taken(renderer: Renderer, name: str) -> dict[int, bool]:
    """Per message compiled so far: whether its template is a DirectTemplate."""
    return {key[1]: isinstance(c, DirectTemplate) for key, c in renderer._compiled.items()
            if key[0] == name}


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return Build(_package(tmp_path_factory.mktemp("ctx"))).bundle


@pytest.mark.parametrize("name", sorted(PROMPTS))
def test_the_direct_context_renders_as_new_context_does(bundle: Any, name: str) -> None:
    fast, slow = Renderer(bundle), Renderer(bundle, fastpaths=False)
    assert _outcome(fast, name) == _outcome(slow, name)
    # the path under test was taken, except by a template with blocks (and the message
    # after the one that fails is never compiled); the judge never took it
    assert _taken(fast, name) == ({0: True} if name == "undefined"
                                  else {0: name != "blocks", 1: True})
    assert set(_taken(slow, name).values()) == {False}
    assert all(type(t) is Compiled for t in slow._compiled.values())


def test_the_outcomes_are_what_jinja_renders(bundle: Any) -> None:
    r = Renderer(bundle)
    texts = {n: r.get(n, {"topic": "t"})["messages"][0]["content"]["text"]
             for n in PROMPTS if n != "undefined"}
    assert texts == {
        "sets": "t! [t!]", "macros": "<t|inner t>", "imports": "T(p)",
        "includes": "included t here", "namespace": "1234=6 [0, 1, 2]",
        "filters": "T CALM t", "blocks": "base [child t]", "shadows": "changed calm!"}
    # what one message sets is its own: the next message of the request sees the arguments
    second = r.get("shadows", {"topic": "t"})["messages"][1]["content"]["text"]
    assert second == "second t"
    with pytest.raises(RenderError, match="nothing_here"):
        r.get("undefined", {"topic": "t"})


def test_the_context_is_checked_once_per_environment(bundle: Any,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A renderer judges whether Jinja's context is the one it fills in once per
    environment, not once per template (a review prepares thousands), and a template it
    prepares directly holds what ``DirectTemplate(template, shared)`` would."""
    calls: list[object] = []
    fits = DirectTemplate.fits

    def counted(general: Compiled) -> bool:
        calls.append(general)
        return fits(general)

    monkeypatch.setattr(DirectTemplate, "fits", staticmethod(counted))
    r = Renderer(bundle)
    for name in sorted(PROMPTS):
        _outcome(r, name)
    assert len(calls) == 1
    for direct in r._compiled.values():
        if isinstance(direct, DirectTemplate):
            made = DirectTemplate(direct.template, direct.globals)
            assert all(getattr(made, f) == getattr(direct, f)
                       for f in (*Compiled.__slots__, *DirectTemplate.__slots__))
