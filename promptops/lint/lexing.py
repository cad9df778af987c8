"""Jinja's token stream, the same tokens, without the lexer's per-character scan of text.

Why: the rules that judge rendered text (PO504, PO506: ``LintContext.tokens``) lex every
template again after validation parsed it. Jinja's lexer finds the next tag with
``(.*?)(?:<tag starts>)``: the lazy group tries every tag pattern at every character of
plain text, about 90 ns a character. Real prompts are mostly plain text, and some are long:
on the second fresh speed corpus (tests/corpus/speed2, tuning part; issue 26, session 10)
200-230 KB VS Code prompts with a few ``{{ }}`` took 18-20 ms each to lex, three quarters of
all the rules' time where no text repeats.

The lexer here is Jinja's own (``get_lexer``: same rules, same ``tokeniter``, so the same
tokens, line numbers, lstrip/trim handling and errors); only the root rule's leading
``(.*?)`` is replaced by a group that takes the same text in one possessive sweep: runs of
characters that cannot start a tag, and any other character where no tag starts. Why it is
the same: every alternative of the root rule begins with a tag start (``{%``, ``{{``,
``{#``) and can match wherever one begins (its ``-``/``+`` marker may be empty), so the
first place the tag patterns match is the first place a tag start occurs, which is exactly
where the sweep stops; where none occurs both fail and the ``.+`` rule takes the rest.
Environments this does not hold for (line statements or line comments, a Jinja whose root
rule has another shape) get Jinja's lexer unchanged. ``tests/lint/test_lexing.py`` holds the
two equal.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterator

from jinja2 import Environment
from jinja2.lexer import get_lexer

_LAZY = "(.*?)"  # the root rule's text group, before its "(?:<tag starts>)"


def tokenizer(env: Environment) -> Callable[[str], Iterator[tuple[int, str, str]]]:
    """``source -> tokens``: what ``env.lex(source)`` yields (TemplateSyntaxError alike)."""
    base = get_lexer(env)
    rule = base.rules["root"][0]
    if env.line_statement_prefix or env.line_comment_prefix \
            or not rule.pattern.pattern.startswith(_LAZY + "(?:"):
        return lambda source: base.tokeniter(source, None)
    starts = [env.block_start_string, env.variable_start_string, env.comment_start_string]
    first = "".join(sorted({re.escape(s[0]) for s in starts}))
    sweep = rf"((?:[^{first}]++|(?!{'|'.join(re.escape(s) for s in starts)}).)*+)"
    fast = copy.copy(base)
    fast.rules = {**base.rules, "root": [
        rule._replace(pattern=re.compile(sweep + rule.pattern.pattern[len(_LAZY):],
                                         rule.pattern.flags)),
        *base.rules["root"][1:]]}
    return lambda source: fast.tokeniter(source, None)
