"""PO504's and PO505's pieces of output from the text-shape scan (issue 26, session 20).

:meth:`LintContext.output_pieces` lexes the first source of a ``text_shape`` key and
gives later sources of that key their pieces from the scan: they must be the lexer's.
"""

from __future__ import annotations

import random

from promptops.lint.config import settings
from promptops.lint.context import LintContext
from promptops.pipeline.source import MemorySource
from promptops.pipeline.templates import TemplateIndex
from promptops.pipeline.validate import validate

_LAYOUTS = [
    "Copy {k}. \n{{{{ topic }}}} \n{{% if topic %}}\t\n{{% endif %}}{w}",
    '{{% include "partials/a.j2" %}} {w}\n{{{{ "a\\n" ~ topic }}}}{w} ',
    "{w} {{# a note #}} \n{{{{ topic }}}}",
    "{{{{ topic | f( }}}} {w} \n",  # does not lex: nothing
    "No tag {k} \nat all{w}",
]


def _context(rnd: random.Random, n: int) -> LintContext:
    files = {"promptops.yaml": "name: pieces\nversion: 1.0.0\n",
             "partials/a.j2": "Partial \n"}
    for i in range(n):
        body = rnd.choice(_LAYOUTS).format(k=i, w=rnd.choice(["", " ", "x \ny", "\n"]))
        files[f"prompts/p{i}.prompt.yaml"] = (
            f"description: Prompt {i}\narguments:\n  - name: topic\n    required: true\n"
            "messages:\n  - role: user\n    text: |-\n"
            + "".join(f"      {line}\n" for line in body.split("\n")))
    source = MemorySource(files)
    return LintContext(source, settings(None, [], []),
                       validate(source, index=TemplateIndex(keep_asts=True)))


def test_pieces_from_the_scan_are_the_lexers() -> None:
    ctx = _context(random.Random(3), 60)
    lexed = 0
    real_tokens = ctx.tokens

    def counting(source: str) -> list[tuple[int, str, str]]:
        nonlocal lexed
        lexed += 1
        return real_tokens(source)

    ctx.tokens = counting  # type: ignore[method-assign]
    for prompt in ctx.pkg.prompts:
        for _, _, text in ctx.sources(prompt):
            got = ctx.output_pieces(text)
            tokens = real_tokens(text)
            last = len(tokens) - 1
            assert got == [(line, value, i == last)
                           for i, (line, kind, value) in enumerate(tokens) if kind == "data"], text
    assert lexed <= 20  # a key lexed once (60 prompts of 5 layouts, 4 endings each)
