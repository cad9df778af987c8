"""Lint's faster helpers (issue 26, session 7) answer exactly what the slower forms did.

Each speed-up replaced a simple form by a cheaper one: a walk without Jinja's generators,
a character class as ranges, positions instead of copies, a prefilter before lexing. The
simple forms are kept here as oracles and compared on real and on generated input, so a
later "optimisation" that changes an answer fails here before it changes a finding.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sized
from pathlib import Path

import pytest
from jinja2 import nodes

from promptops.lint.rules import po105_literal_delimiters as po105
from promptops.lint.rules._rendered import _TRAILING, may_trail, trailing_in
from promptops.lint.rules.po502_invisible_unicode import _ANY, INVISIBLE
from promptops.lint.rules.po509_undelimited_argument import _OPEN_TAG, _QUOTES, delimited
from promptops.lint.walk import children, preorder
from promptops.pipeline.templates import TemplateIndex

CORPUS = Path(__file__).parent / "corpus" / "package"


def _sources() -> list[str]:
    """Every template text of the real-prompt corpus package, and the YAML files whole."""
    return [p.read_text(encoding="utf-8") for p in sorted(CORPUS.rglob("*"))
            if p.is_file() and p.suffix in (".j2", ".md", ".yaml", ".txt")]


def _old_walk(node: nodes.Node) -> list[nodes.Node]:
    out, stack = [], [node]
    while stack:
        current = stack.pop()
        out.append(current)
        stack.extend(reversed(list(current.iter_child_nodes())))
    return out


def test_walk_matches_jinjas_child_iteration_on_real_templates() -> None:
    index = TemplateIndex(keep_asts=True)
    walked = 0
    for source in _sources():
        ast = index.ast(source)
        if ast is None:
            continue
        assert preorder(ast) == _old_walk(ast)
        for node in preorder(ast):
            assert children(node) == list(node.iter_child_nodes())
        walked += 1
    assert walked > 50


def test_invisible_class_is_exactly_the_set() -> None:
    candidates = {chr(c) for c in range(0x80, 0x30000)} | {chr(c) for c in range(0xE0000, 0xE0100)}
    assert {c for c in candidates if _ANY.fullmatch(c)} == set(INVISIBLE)
    assert _ANY.search("plain ascii text\n") is None


def _old_delimited(source: str, start: int, end: int) -> bool:
    if source.count("```", 0, start) % 2 == 1:
        return True
    before, after = source[:start].rstrip(" "), source[end:].lstrip(" ")
    if before and before[-1] in _QUOTES and after.startswith(_QUOTES[before[-1]]):
        return True
    tag = _OPEN_TAG.search(before.rstrip())
    return tag is not None and after.lstrip().startswith(f"</{tag.group(1)}>")


def test_delimited_matches_the_copying_form() -> None:
    rnd = random.Random(26)
    pieces = ["<doc>", "</doc>", "<a href='x'>", "</a>", " ", "  ", "\n", "\t", '"', "'", "`",
              "“", "”", "«", "»", "```", "text", "<", ">", "<b <c>", "</c>", "x\n "]
    checked = 0
    for _ in range(4000):
        left = "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 6)))
        right = "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 6)))
        source = left + "{{ value }}" + right
        start = len(left)
        end = start + len("{{ value }}")
        assert delimited(source, start, end) == _old_delimited(source, start, end), source
        checked += delimited(source, start, end)
    assert checked > 100  # both answers were exercised


@pytest.mark.parametrize("text", ["a \nb", "a\t\r\nb", "a  ", "a\tb\n", "a\nb", "x \r", "", " "])
def test_trailing_prefilter_never_hides_trailing_whitespace(text: str) -> None:
    # The lexer's data is a piece of the source with line ends normalised to \n.
    data = text.replace("\r\n", "\n").replace("\r", "\n")
    if _TRAILING.search(data):
        assert may_trail(text)


_OLD_MAY_TRAIL = re.compile(r"[ \t](?:[\r\n]|\Z)")


def test_trailing_prefilter_by_substrings_matches_the_regex() -> None:
    rnd = random.Random(16)
    pieces = ["a", " ", "\t", "\n", "\r", "\r\n", "x y", "\u00a0", "\u2028"]
    texts = [*_sources(), "", " ", "\t", "a\t\r", "a \rb"]
    texts += ["".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 8))) for _ in range(5000)]
    found = 0
    for text in texts:
        assert may_trail(text) == (_OLD_MAY_TRAIL.search(text) is not None), text
        found += may_trail(text)
    assert 1000 < found < len(texts)  # both answers were exercised


def test_a_tag_free_templates_tokens_are_the_lexers() -> None:
    from promptops.lint.context import text_tokens

    env = TemplateIndex().env
    rnd = random.Random(16)
    pieces = ["a", " ", "\n", "\r", "\r\n", "\t", "{", "}", "%", "#", "x y", "\u2028", "\x85"]
    texts = [*_sources(), "", "\n", "\r", "a\r\n", "{ {", "{%", "x {{ y }}"]
    texts += ["".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 12)))
              for _ in range(20000)]
    plain = 0
    for text in texts:
        found = text_tokens(env, text)
        if found is not None:
            assert found == list(env.lex(text)), text
            plain += 1
    assert 1000 < plain < len(texts)  # both kinds were seen


def test_one_line_is_the_lines_split_gives() -> None:
    from promptops.pipeline.lines import split_line, splitlines_line

    rnd = random.Random(16)
    pieces = ["a", "\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028",
              "\u2029", " "]
    texts = ["", "\n", "a", *(("".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 10))))
                              for _ in range(5000))]
    for text in texts:
        split, lines = text.split("\n"), text.splitlines()
        for n in range(-1, len(split) + 2):
            assert split_line(text, n) == (split[n] if 0 <= n < len(split) else None), text
            assert splitlines_line(text, n) == (lines[n] if 0 <= n < len(lines) else None), text


def _old_trailing(data: str, final: bool, lineno: int) -> list[int]:
    out = []
    for m in _TRAILING.finditer(data):
        if m.end() == len(data) and not final:
            continue
        out.append(lineno + data.count("\n", 0, m.start()))
    return out


def test_trailing_lines_by_line_ends_match_the_regex() -> None:
    rnd = random.Random(26)
    pieces = ["a", "b c", " ", "  ", "\t", "\n", "\n\n", " \n", "\t\n", "x\t", "\u00a0"]
    texts = [*_sources(), "", " ", "\n", " \n", "a \nb\t", "\t\t\n \n", "x  \n\n y \t"]
    texts += ["".join(rnd.choice(pieces) for _ in range(rnd.randint(1, 30)))
              for _ in range(3000)]
    found = 0
    for text in texts:
        for final in (True, False):
            assert trailing_in(text, final, 7) == _old_trailing(text, final, 7), (text, final)
            found += len(trailing_in(text, final, 7))
    assert found > 1000  # both answers were exercised


def test_first_match_per_line_on_many_matches() -> None:
    from promptops.lint.rules._text import first_per_line

    class Ctx:
        text_files = ("a.md", "b.md")

        def text(self, path: str) -> str:
            return {"a.md": "x\u200by\u200bz\nplain\n\u200b\n\n\u00adend",
                    "b.md": "no hits\n"}[path]

    found = list(first_per_line(Ctx(), _ANY))  # type: ignore[arg-type]
    assert found == [("a.md", 1, 2, "\u200b"), ("a.md", 3, 1, "\u200b"),
                     ("a.md", 5, 1, "\u00ad")]
    rx = re.compile("y")
    assert list(first_per_line(Ctx(), rx)) == [("a.md", 1, 3, "y")]  # type: ignore[arg-type]


def _old_collect(ast: nodes.Template) -> tuple[object, ...]:
    """The facts walk as it was before it also gave the node list (its own child order)."""
    loads: list[tuple[str, int]] = []
    stores: set[str] = set()
    calls: list[tuple[str, str, int]] = []
    printed: set[str] = set()
    silent = True
    stack: list[tuple[nodes.Node, bool]] = [(ast, False)]
    while stack:
        node, in_output = stack.pop()
        if isinstance(node, nodes.Name):
            if node.ctx == "load":
                loads.append((node.name, node.lineno))
                if in_output:
                    printed.add(node.name)
            else:
                stores.add(node.name)
        elif isinstance(node, nodes.Getitem) and isinstance(node.node, nodes.Name) \
                and node.node.name == "args" and isinstance(node.arg, nodes.Const) \
                and isinstance(node.arg.value, str):
            loads.append((node.arg.value, node.lineno))
            if in_output:
                printed.add(node.arg.value)
            loads.append(("args", node.lineno))
            stack.append((node.arg, in_output))
            continue
        elif isinstance(node, nodes.Filter | nodes.Test) and node.name:
            calls.append(("filter" if isinstance(node, nodes.Filter) else "test", node.name,
                          node.lineno))
        elif isinstance(node, nodes.Output):
            silent = silent and all(
                isinstance(n, nodes.TemplateData) and not n.data.strip() for n in node.nodes)
        elif isinstance(node, nodes.Macro | nodes.CallBlock):
            stores.update(a.name for a in node.args)
        elif isinstance(node, nodes.Include | nodes.Import | nodes.FromImport | nodes.Extends):
            silent = False
            if isinstance(node, nodes.Import):  # the names an import binds (PO201, session 7)
                stores.add(node.target)
            elif isinstance(node, nodes.FromImport):
                stores.update(n if isinstance(n, str) else n[1] for n in node.names)
        inner = in_output or isinstance(node, nodes.Output)
        stack.extend((child, inner) for child in reversed(list(node.iter_child_nodes())))
    loads.sort(key=lambda x: x[1])
    return (tuple(loads), frozenset(stores), tuple(calls), frozenset(printed), silent)


EXTRA = [
    '{{ args["reference-file"] }} {% if args["x"] %}{{ args.y }}{% endif %}',
    "{% for a, b in items %}{{ a | upper }}{% set c = b %}{{ c is defined }}{% endfor %}",
    "{% macro m(p, q=1) %}{{ p }}{{ m(q) }}{% endmacro %}{% call m(1) %}x{% endcall %}",
    '{% include "p.j2" %}{% import "m.j2" as mm %}{{ mm.f(args["k"]) }}',
    '{% from "m.j2" import f as g, h %}{{ g(1) }}{{ h(2) }}',
    "   \n{# only a comment #}\n",
]


def test_facts_walk_gives_the_same_facts_and_every_node() -> None:
    from promptops.lint.walk import collect

    index = TemplateIndex(keep_asts=True)
    checked = 0
    for source in [*_sources(), *EXTRA]:
        ast = index.ast(source)
        if ast is None:
            continue
        every: list[nodes.Node] = []
        facts = collect(ast, every)
        assert (facts.loads, facts.stores, facts.calls, facts.printed, facts.silent) \
            == _old_collect(ast), source
        assert every == preorder(ast)
        checked += 1
    assert checked > 50


def _old_comments(text: str) -> list[tuple[int, int]]:
    out = []
    for n, line in enumerate(text.split("\n"), 1):
        at = line.removesuffix("\r").find("<!--")
        if at >= 0:
            out.append((n, at))
    return out


def test_html_comments_by_substring_search_match_the_line_split() -> None:
    from promptops.lint.rules.po503_html_comment import _comments

    pieces = ["<!--", "<!-", "-", "<", "!", "\n", "\r", "\r\n", "ab", " ", "<!--\r", "<!--\n"]
    assert _agree(_comments, _old_comments, pieces, seed=16, longest=14) > 1000


def _old_spans(source: str) -> list[tuple[str, str, bool, int]]:
    """PO105's spans as session 16 found them: every source masked, each line counted
    from the start."""
    out: list[tuple[str, str, bool, int]] = []
    if "`" not in source:
        return out
    masked = po105._RAW.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), source)
    for m in po105._SPAN.finditer(masked):
        line_start = masked.rfind("\n", 0, m.start()) + 1
        line_end = masked.find("\n", m.end())
        prose = masked[line_start:line_end if line_end >= 0 else None]
        out.append((m.group(0), m.group(1), po105._LITERAL.search(prose) is not None,
                    source.count("\n", 0, m.start()) + 1))
    return out


def test_literal_spans_with_blanked_raw_blocks_match_the_substitution() -> None:
    """Raw blocks on one line and across lines (with ``\\r`` and ``\\u2028`` inside),
    Jinja openers inside and outside them and backticks around: the same spans, lines and
    literal marks as the old form, and a source whose every opener is raw has none."""
    from promptops.lint.rules.po105_literal_delimiters import _spans

    rnd = random.Random(17)
    pieces = ["`", "{{", "}}", "{%", "%}", "{#", "{% raw %}", "{% endraw %}", "{%- raw -%}",
              "{%+ endraw +%}", "\n", "\r", "\u2028", " x ", "literal", "name", "{"]
    found = raw_only = 0
    for _ in range(20000):
        text = "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 16)))
        assert _spans(text) == _old_spans(text), text
        found += len(_spans(text))
    for name in ("purpose", "target_audience"):
        text = f"Use `{{% raw %}}{{{{{name}}}}}{{% endraw %}}` here.\n`{{{{ {name} }}}}`"
        assert _spans(text) == _old_spans(text) and len(_spans(text)) == 1
        raw_only += _spans(text.split("\n")[0]) == []
    assert found > 300 and raw_only == 2


def test_expressions_scan_with_compiled_patterns_matches_the_generator() -> None:
    """PO509's ``{{ }}`` scan with its patterns compiled once gives the old form's list."""
    from promptops.lint.rules.po509_undelimited_argument import _scan

    def old(source: str) -> list[tuple[int, int, frozenset[str]]]:
        return [(m.start(), m.end(), frozenset(re.findall(r"[A-Za-z_]\w*", m.group(1))))
                for m in re.finditer(r"\{\{-?(.*?)-?\}\}", source, re.S)]

    pieces = ["{{", "}}", "{{-", "-}}", " a ", "b_1", "\n", "{% raw %}", "x.y", "9z", "{"]
    assert _agree(_scan, old, pieces, seed=18, longest=12) > 1000


def test_literal_spans_counted_on_match_the_count_from_the_start() -> None:
    rng = random.Random(17)
    pieces = ["`", "`{{ a }}`", "`{% if x %}`", "{% raw %}`{{ b }}`{% endraw %}",
              "{%- raw +%}\n`{# c #}`\n{%+ endraw -%}", "raw", "\n", "literally ", "x ",
              "`{{ c }} verbatim`", "{{ d }}"]
    texts = _sources() + ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 40)))
                          for _ in range(3000)]
    found = [po105._spans(t) for t in texts]
    assert found == [_old_spans(t) for t in texts]
    assert sum(len(f) > 1 for f in found) > 100  # many spans a text: the count goes on


def _agree(new: Callable[[str], Sized], old: Callable[[str], object], pieces: list[str], *,
           seed: int, longest: int) -> int:
    """Asserts ``new`` gives ``old``'s answer on 20,000 random texts of up to ``longest``
    ``pieces``; returns how many items the answers held in all (so a test can ask that
    the texts found something)."""
    rnd = random.Random(seed)
    found = 0
    for _ in range(20000):
        text = "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, longest)))
        answer = new(text)
        assert answer == old(text), text
        found += len(answer)
    return found
