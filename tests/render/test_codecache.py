"""Compiled code shared between renderers renders exactly what compiling afresh renders.

A review's two sides and a bundle's repeated message texts share one CodeCache
(promptops.render.codecache): each source compiles once. The code must never cross
whitespace modes (the same source renders differently in each) nor stand in for a
template file whose content differs under the same name.
"""

from __future__ import annotations

from pathlib import Path

from promptops.pipeline.build import Build
from promptops.render.codecache import CodeCache
from promptops.render.renderer import Renderer

TEXT = "Start\n{% if who %}\n  Hello {{ who }}\n{% endif %}\n{% include 'partials/p.j2' %}\nEnd"


def _bundle(root: Path, whitespace: str, partial: str, copies: int = 3) -> dict:  # type: ignore[type-arg]
    (root / "prompts").mkdir(parents=True)
    (root / "partials").mkdir()
    (root / "promptops.yaml").write_text(
        f"name: c\nversion: 1.0.0\ntemplates: {{whitespace: {whitespace}}}\n")
    (root / "partials" / "p.j2").write_text(partial)
    body = "\n".join("      " + line for line in TEXT.splitlines())
    for n in range(copies):
        (root / "prompts" / f"p{n}.prompt.yaml").write_text(
            f"arguments:\n  - name: who\nmessages:\n  - role: user\n    text: |\n{body}\n")
    return Build(root, None).bundle  # type: ignore[return-value]


def _texts(renderer: Renderer) -> list[str]:
    return [renderer.get(f"p{n}", {"who": "Ann"})["messages"][0]["content"]["text"]
            for n in range(3)]


def test_shared_code_renders_as_fresh_compiles_do(tmp_path: Path) -> None:
    standalone = _bundle(tmp_path / "s", "standalone", "Partial S\n")
    jinja = _bundle(tmp_path / "j", "jinja", "Partial J\n")
    code = CodeCache()
    shared = Renderer(standalone, code), Renderer(jinja, code)
    alone = Renderer(standalone, CodeCache()), Renderer(jinja, CodeCache())
    for mine, fresh in zip(shared, alone, strict=True):
        assert _texts(mine) == _texts(fresh)
    s, j = _texts(shared[0])[0], _texts(shared[1])[0]
    assert s != j  # the modes differ, and neither took the other's code
    assert "Partial S" in s and "Partial J" in j  # same file name, other content
    # three prompts with one text: one inline compile per mode, one per partial content
    assert len(code) == 4


def test_a_renderer_without_a_cache_compiles_a_repeated_text_once(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path / "s", "standalone", "P\n", copies=3)
    renderer = Renderer(bundle)
    assert len(set(_texts(renderer))) == 1
    assert renderer._code is not None and len(renderer._code) == 2  # the text, the partial


def test_prompts_of_one_text_share_its_template_within_a_mode(tmp_path: Path) -> None:
    """A renderer makes one template object per (whitespace mode, source): prompts that
    repeat a text take it (not a template each), a prompt of another mode its own, and
    each renders what a renderer of that prompt alone renders."""
    bundle = _bundle(tmp_path / "s", "standalone", "P\n", copies=3)
    other = dict(bundle["prompts"][2], name="p9", whitespace="jinja")
    bundle["prompts"].append(other)  # type: ignore[attr-defined]
    text = bundle["prompts"][0]["messages"][0]["text"]  # type: ignore[index]
    renderer = Renderer(bundle)
    made = [renderer.template(f"p{n}", 0, "text", text) for n in (0, 1, 2, 9)]
    assert made[0] is made[1] is made[2]
    assert made[3] is not made[0]
    for n in (0, 1, 2, 9):
        alone = Renderer(bundle).get(f"p{n}", {"who": "Ann"})
        assert renderer.get(f"p{n}", {"who": "Ann"}) == alone
    assert renderer.get("p9", {"who": "Ann"}) != renderer.get("p0", {"who": "Ann"})


def test_renderers_of_one_cache_share_only_templates_that_load_none(tmp_path: Path) -> None:
    """Two renderers of one code cache (a review's two ends) share an inline template
    whose code asks its environment for no template, and make their own of one that
    includes (their loaders differ: here the partial's content), of another mode, or
    with the fast paths off; each renders what a renderer of its own renders."""
    base = _bundle(tmp_path / "a", "standalone", "Partial A\n")
    head = _bundle(tmp_path / "b", "standalone", "Partial B\n")
    plain = "Hello {{ who }}{% macro m(x) %}[{{ x }}]{% endmacro %}{{ m(who) }}\n"
    for bundle in (base, head):
        bundle["prompts"].append(dict(bundle["prompts"][0], name="plain",  # type: ignore[attr-defined]
                                      messages=[{"type": "text", "role": "user", "text": plain}]))
    code = CodeCache()
    old, new = Renderer(base, code), Renderer(head, code)
    slow = Renderer(head, code, fastpaths=False)
    text = base["prompts"][0]["messages"][0]["text"]  # type: ignore[index]
    assert old.template("plain", 0, "text", plain) is new.template("plain", 0, "text", plain)
    assert slow.template("plain", 0, "text", plain) is not new.template("plain", 0, "text", plain)
    assert old.template("p0", 0, "text", text) is not new.template("p0", 0, "text", text)
    for renderer, bundle in ((old, base), (new, head), (slow, head)):
        for name in ("p0", "plain"):
            assert renderer.get(name, {"who": "Ann"}) == Renderer(bundle).get(name, {"who": "Ann"})
    assert "Partial B" in new.get("p0", {"who": "Ann"})["messages"][0]["content"]["text"]  # type: ignore[typeddict-item]
    alone = Renderer(head)  # a cache of its own (serve's): kept by source only
    alone.template("plain", 0, "text", plain)
    assert alone._code is not None and not alone._code._made
