"""Answers by template shape (promptops/lint/shaped.py) are each template's own.

A rule's answer from a tree is computed once per facts key (a shape and its values that
are not texts) and handed to every template of that key. Each test here compares those
answers with the template's own walk, on families of templates built to share a shape,
and fails against a sharing that ignores what the key must carry: a text's blankness, a
value that is not a text, a required block, a compute that reads the texts.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any, TypeVar

import pytest
from jinja2 import nodes

from promptops.lint.config import settings
from promptops.lint.engine import lint_source
from promptops.lint.shaped import Reads, ShapeTables, _texts
from promptops.lint.walk import Facts, collect, preorder
from promptops.pipeline.source import MemorySource
from promptops.pipeline.templates import TemplateIndex
from promptops.pipeline.textshape import literal_shape, text_shape

T = TypeVar("T")
WORDS = ["", " ", "  ", "\n", "hello", " there ", "x", "Keep it short.\n", "\t"]


class _Trees:
    def __init__(self, index: TemplateIndex) -> None:
        self.index = index

    def ast(self, key: str, source: str) -> nodes.Template | None:
        return self.index.ast(source)

    def nodes(self, ast: nodes.Node) -> list[nodes.Node]:
        return preorder(ast)

    def literal_shape(self, source: str) -> tuple[Any, list[str], list[object]] | None:
        return self.index.literal_shape(source)


class _Tables:
    """A ShapeTables with its trees at hand, as the lint context calls it."""

    def __init__(self, index: TemplateIndex) -> None:
        self.trees, self.tables = _Trees(index), ShapeTables(index.env)

    def facts(self, source: str, walk: Callable[[str], Facts | None]) -> Facts | None:
        return self.tables.facts(self.trees, source, walk)

    def answer(self, kind: str, source: str, compute: Callable[[nodes.Template | None], T],
               reads: Reads = lambda every: ()) -> T:
        return self.tables.answer(self.trees, kind, source, compute, reads)


def _tables() -> tuple[TemplateIndex, _Tables, list[str]]:
    index = TemplateIndex(keep_asts=True)
    return index, _Tables(index), []


def _walk(index: TemplateIndex, walked: list[str]) -> Callable[[str], Facts | None]:
    def walk(source: str) -> Facts | None:
        walked.append(source)
        ast = index.ast(source)
        return None if ast is None else collect(ast)
    return walk


def _own(index: TemplateIndex, source: str) -> Facts | None:
    ast = index.ast(source)
    return None if ast is None else collect(ast)


def _family(pattern: str, n: int, rnd: random.Random) -> list[str]:
    """``n`` templates of ``pattern``'s shape: each ``@`` a word of :data:`WORDS` (not
    empty, which is another shape; no line break, which would move the tags after it),
    ``#`` a template name, then a blank end."""
    out = []
    for _ in range(n):
        text = pattern
        while "@" in text:
            text = text.replace("@", rnd.choice([w for w in WORDS if w and "\n" not in w]), 1)
        while "#" in text:
            text = text.replace("#", rnd.choice(["a.j2", "b.j2", "p/c.j2"]), 1)
        out.append(text + rnd.choice(WORDS[1:4]))
    return out


PATTERNS = [
    "@{% if x %}@{% endif %}@",  # prints nothing but its texts: silent by their blankness
    "@{{ name | upper }}@{{ args[\"ref-file\"] }}@",
    "@{% include \"#\" %}@{% for i in items %}@{{ i }}@{% endfor %}",
    "@{% macro m(a) %}@{{ a }}@{% endmacro %}@{{ m(1) | frobnicate }}@",
    "{% set t %}@{% endset %}@{% if y is odd %}@{{ y.__class__ }}@{% endif %}",
]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_facts_by_shape_are_each_templates_own(pattern: str) -> None:
    rnd = random.Random(pattern)
    index, tables, walked = _tables()
    sources = _family(pattern, 60, rnd)
    for source in sources:
        assert tables.facts(source, _walk(index, walked)) == _own(index, source), source
    assert len(set(walked)) < len(set(sources)) / 2  # shared, not walked each time


def test_a_shape_silent_only_where_its_texts_are_blank() -> None:
    index, tables, walked = _tables()
    sources = ["{% if x %} {% endif %} ", "{% if x %}  {% endif %}\t",
               "{% if x %}hi{% endif %} ", "{% if x %} {% endif %}yo", "{% if x %} {% endif %}  "]
    got = [tables.facts(s, _walk(index, walked)) for s in sources]
    assert [f.silent for f in got if f is not None] == [True, True, False, False, True]
    assert len(walked) == 2


def test_a_required_block_shape_is_not_shared() -> None:
    """Jinja's parse of ``{% block b required %}`` reads its text: whitespace parses,
    anything else does not, whatever the first two templates of the shape held."""
    index, tables, walked = _tables()
    sources = ["{% block b required %} {% endblock %}", "{% block b required %}  {% endblock %}",
               "{% block b required %}x{% endblock %}"]
    assert text_shape(index.env, sources[0]) is not None
    assert text_shape(index.env, sources[0])[0] == text_shape(index.env, sources[2])[0]  # type: ignore[index]
    got = [tables.facts(s, _walk(index, walked)) for s in sources]
    assert got[0] is not None and got[1] is not None
    assert got[2] is None  # does not parse: validation says why


def test_an_answer_is_shared_only_once_two_templates_agree() -> None:
    """A compute that (wrongly) reads the texts is caught by the second template."""
    index, tables, _ = _tables()

    def texts(ast: nodes.Template | None) -> list[str]:
        return [] if ast is None else [n.data for n in ast.find_all(nodes.TemplateData)]

    sources = ["a{{ x }}b", "c{{ x }}d", "e{{ x }}f", "g{{ x }}h"]
    assert [tables.answer("texts", s, texts) for s in sources] == [
        texts(index.ast(s)) for s in sources]
    calls: list[str] = []

    def names(ast: nodes.Template | None) -> list[str]:
        calls.append("walk")
        return [] if ast is None else [n.name for n in ast.find_all(nodes.Name)]

    assert [tables.answer("names", s, names) for s in sources] == [["x"]] * 4
    assert len(calls) == 2


def test_the_literals_an_answer_reads_are_each_templates_own() -> None:
    """Templates that differ in their literals are one shape (literal_shape): the facts
    keep each template's own ``args["name"]`` keys, and an answer that reads literals
    (by where they are) each template's own values, however the two first agreed."""
    index, tables, walked = _tables()
    sources = [f'{{% set label = "case " ~ {n} %}}{w}{{{{ args["{k}"] }}}} {{{{ "{k}" | {f} }}}}'
               for n in (7, 8) for w in ("a", "b", "c") for k in ("ref-file", "other")
               for f in ("upper", "nope")]
    assert literal_shape(index.env, sources[0])[0] == literal_shape(  # type: ignore[index]
        index.env, sources[12])[0]  # type: ignore[index]
    for source in sources:
        assert tables.facts(source, _walk(index, walked)) == _own(index, source), source
    assert len(walked) < len(sources) / 2

    def ranges(ast: nodes.Template | None) -> list[object]:
        return [] if ast is None else [c.args[0].value for c in ast.find_all(nodes.Call)
                                       if isinstance(c.args[0], nodes.Const)]

    def calls(every: list[nodes.Node]) -> list[nodes.Node]:
        return [a for n in every if isinstance(n, nodes.Call) for a in n.args]

    looped = [f'{{% set x = "{w}" %}}{{% for i in range({n}) %}}{{{{ i }}}}{{% endfor %}}'
              for n in (3, 3, 3, 10**9, 4, 3) for w in ("a", "b")]
    assert [tables.answer("ranges", s, ranges, calls) for s in looped] == [
        ranges(index.ast(s)) for s in looped]


def test_a_name_is_in_the_key_only_for_an_answer_that_reads_it() -> None:
    """Templates that include other partials share an answer that reads no name (the
    facts: walked for the first two only); an answer that reads an include's name keeps
    each template's own."""
    index, tables, walked = _tables()
    sources = [f'{{% include "partials/q{k}.j2" %}}{{% set n = {k} %}} {{{{ topic }}}}'
               for k in range(12)]
    for source in sources:
        assert tables.facts(source, _walk(index, walked)) == _own(index, source), source
    assert len(walked) == 2

    def named(ast: nodes.Template | None) -> list[object]:
        return [] if ast is None else [
            i.template.value for i in ast.find_all(nodes.Include)
            if isinstance(i.template, nodes.Const)]

    def includes(every: list[nodes.Node]) -> list[nodes.Node]:
        return [n.template for n in every if isinstance(n, nodes.Include)]

    others = [f'{{% include "partials/q{q}.j2" %}}{{% set n = {k} %}} {{{{ topic }}}}'
              for k, q in enumerate([0, 0, 1, 2, 0, 3])]  # the first two agree
    assert [tables.answer("named", s, named, includes) for s in others] == [
        named(index.ast(s)) for s in others]


def test_literals_joined_in_one_string_are_not_placed() -> None:
    """``"a" "b"`` is one ``Const`` of two literals: an answer that reads it is the
    template's own, never one keyed by one of the two."""
    index, tables, walked = _tables()
    sources = [f'{{{{ args["{a}" "{b}"] }}}} {{{{ "{b}" }}}}' for a, b in (
        ("x", "y"), ("x", "y"), ("z", "y"), ("x", "w"), ("", "y"), ("q", "y"))]
    for source in sources:
        assert tables.facts(source, _walk(index, walked)) == _own(index, source), source


def test_texts_are_placed_only_where_one_way_fits() -> None:
    assert _texts(["x", "y"], ["n", "x", "m", "y"]) == frozenset({1, 3})
    assert _texts(["a"], ["a", "a"]) is None  # a name equal to a text: which is which?
    assert _texts(["a", "b"], ["b", "a"]) is None
    assert _texts([], ["n"]) == frozenset()


def _package(rnd: random.Random, n: int) -> dict[str, str]:
    files = {"promptops.yaml": "name: shapes\nversion: 1.0.0\n",
             "partials/a.j2": "Partial a for {{ who }}.\n",
             "partials/b.j2": "{% if who %}{{ who.__class__ }}{% endif %}\n"}
    bodies = [
        '{{% include "partials/{inc}" %}}\n{w} {{{{ topic }}}} {{{{ extra }}}}\n{w}',
        "{w}{{% if topic %}}{w}{{% endif %}}{w}",
        "{w} {{{{ topic | frobnicate }}}} {{% for i in range(10**9) %}}.{{% endfor %}}\n",
        '{w} {{{{ args["topic"] }}}} {{{{ extra | default("x") }}}}\n',
        "{{% macro m(a) %}}{{{{ m(a) }}}}{{% endmacro %}}{w}{{{{ m(topic) }}}}\n",
        # literals that vary, some read (a subscript, a size), some not (the label)
        '{w}{{% set label = "case " ~ {num} %}}{{{{ topic["{sub}"] }}}} {{{{ "-" * {num} }}}}'
        ' {{{{ topic | indent({num}) }}}} {{{{ topic | attr("{sub}") }}}}\n',
    ]
    for i in range(n):
        body = rnd.choice(bodies).format(inc=rnd.choice(["a.j2", "b.j2"]),
                                         num=rnd.choice([3, 7, 40, 10**9, 2 * 10**8]),
                                         sub=rnd.choice(["__class__", "mro", "name", "x"]),
                                         w=rnd.choice(["", " ", "Write.", "Context: docs"]))
        optional = rnd.random() < 0.5
        files[f"prompts/p{i}.prompt.yaml"] = (
            f"description: Prompt {i}\narguments:\n  - name: topic\n    required: true\n"
            f"  - name: extra\n    required: {'false' if optional else 'true'}\n"
            f"  - name: who\n    required: false\n    default: me\n"
            f"messages:\n  - role: {rnd.choice(['user', 'assistant'])}\n    text: |\n"
            + "".join(f"      {line}\n" for line in body.split("\n")))
    return files


def test_lint_finds_the_same_with_and_without_shapes(monkeypatch: pytest.MonkeyPatch) -> None:
    files = _package(random.Random(26), 80)
    conf = settings(None, [], [])
    shaped_run = lint_source(MemorySource(files), conf).findings
    monkeypatch.setattr(ShapeTables, "_key", lambda self, trees, source: None)
    own_run = lint_source(MemorySource(files), conf).findings
    assert shaped_run == own_run
    codes = {f.code for f in own_run}
    assert {"PO104", "PO207", "PO406", "PO510", "PO511"} <= codes, codes


def test_a_text_is_blank_by_isspace_as_by_strip() -> None:
    """The facts' ``silent`` and the shapes' blankness test a text without a stripped copy
    (``isspace``, which is False for ""): the same answer as ``not text.strip()``."""
    for c in map(chr, range(0x110000)):
        assert (not c.strip()) == c.isspace(), hex(ord(c))
    for text in ("", " ", "\n\t ", " x ", "\u3000\u2028", "a"):
        assert (not text.strip()) == (not text or text.isspace())


def test_a_context_is_freed_without_the_collector() -> None:
    """The tables take the context per call, not as a field: a context in a cycle outlives
    its run until the collector walks everything it reaches (+10% of lint's CPU)."""
    import gc
    import weakref

    from promptops.lint.context import LintContext
    from promptops.pipeline.validate import validate

    files = _package(random.Random(7), 12)
    source = MemorySource(files)
    ctx = LintContext(source, settings(None, [], []),
                      validate(source, index=TemplateIndex(keep_asts=True)))
    for prompt in ctx.pkg.prompts:
        for _, _, text in ctx.sources(prompt):
            ctx.facts("", text)
            ctx.shaped("names", text, lambda ast: [] if ast is None else [
                n.name for n in ast.find_all(nodes.Name)], lambda every: every)
    gone = weakref.ref(ctx)
    was = gc.isenabled()
    gc.disable()
    try:
        del ctx
        assert gone() is None
    finally:
        if was:
            gc.enable()


def test_a_finding_after_a_literal_over_several_lines_is_where_it_is() -> None:
    """A string literal's line breaks decide the lines of what follows it in its tag: a
    template whose literal breaks elsewhere is another shape (session 20: PO201 reported
    ``foo`` of the third prompt on the first two's line)."""
    files = {"promptops.yaml": "name: shapes\nversion: 1.0.0\n"}
    texts = ['{{ "a\nb" ~ foo ~ "c" }}', '{{ "d\ne" ~ foo ~ "f" }}', '{{ "ab" ~ foo ~ "c\n" }}']
    for i, text in enumerate(texts):
        files[f"prompts/p{i}.prompt.yaml"] = (
            f"description: Prompt {i}\nmessages:\n  - role: user\n    text: |-\n"
            + "".join(f"      {line}\n" for line in text.split("\n")))
    found = [(f.path, f.line, f.col) for f in
             lint_source(MemorySource(files), settings(None, [], [])).findings
             if f.code == "PO201"]
    assert found == [("prompts/p0.prompt.yaml", 6, 12), ("prompts/p1.prompt.yaml", 6, 12),
                     ("prompts/p2.prompt.yaml", 5, 17)]


def test_the_shape_tables_key_a_template_by_the_builds_scan(monkeypatch: Any) -> None:
    """An index that keeps its trees keeps the shape scan of each source it parsed, and
    lint's shape tables key the template by it rather than scanning it again (session 21:
    a forked lint child re-scanned the 4,700 templates of ``real`` its build had
    scanned); an index that keeps no trees, or a source never parsed, is scanned."""
    from promptops.pipeline import astshapes

    index = TemplateIndex(keep_asts=True)
    sources = [f"Hi {{{{ name }}}} {i}{{% if x %}}{WORDS[i % 9]}{{% endif %}}" for i in range(9)]
    for source in sources:
        index.parse(source)
    calls: list[str] = []
    real = astshapes.literal_shape

    def counted(env: Any, text: str, **kw: Any) -> Any:
        calls.append(text)
        return real(env, text, **kw)

    monkeypatch.setattr(astshapes, "literal_shape", counted)
    for source in sources:
        assert index.literal_shape(source) == real(index.env, index.env.preprocess(source))
    assert calls == []
    assert index.literal_shape("{{ other }}") == real(index.env, "{{ other }}")
    assert calls == ["{{ other }}"]
    index.parse("{{ other }}")  # the parse after lint's scan reads that scan
    assert calls == ["{{ other }}"]
    plain = TemplateIndex()
    plain.parse(sources[0])
    calls.clear()
    assert plain.literal_shape(sources[0]) is not None and len(calls) == 1
