"""A template reads a variable that is not a declared argument (also in included partials).

Why: templates render with ``StrictUndefined``, so the prompt fails on every request
with "'topic' is undefined"; usually a typo or an argument that was renamed.

Measured on the real-prompt corpus: no finding in 78 prompts.

Fails::

    arguments:
      - name: topic
    messages:
      - role: user
        text: "Write about {{ subject }}"

Passes::

    arguments:
      - name: topic
    messages:
      - role: user
        text: "Write about {{ topic }}"
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from promptops.errors import did_you_mean
from promptops.lint.problem import Hit
from promptops.lint.rules._common import prompt_sources, prompts

if TYPE_CHECKING:
    from promptops.lint.context import LintContext


CODE, NAME, LEVEL, NEEDS = "PO201", "undeclared-variable", "error", "package"


#: Names Jinja provides inside loops and macros without a declaration.
#: ``args`` holds every argument (``args["reference-file"]`` for a name that is no identifier).
IMPLICIT = frozenset({"loop", "caller", "varargs", "kwargs", "super", "self", "args"})


def check(ctx: LintContext) -> Iterator[Hit]:
    known = set(ctx.env.globals) | IMPLICIT
    for prompt in prompts(ctx):
        declared = {a.name for a in prompt.spec.arguments} | known | {
            m.loop[0] for m in prompt.spec.messages if m.loop is not None}  # `for:` items
        for path, loc, source in prompt_sources(ctx, prompt):
            facts = ctx.facts(path, source)
            if facts is None:
                continue
            missing = {n for n, _ in facts.loads} - declared - facts.stores
            for name in sorted(missing):
                lineno = next(n for v, n in facts.loads if v == name)
                line, col = ctx.locate(path, loc, lineno, name)
                via = f" (rendered by prompt {prompt.name!r})" if path != prompt.path else ""
                hint = did_you_mean(name, sorted(a.name for a in prompt.spec.arguments))
                yield Hit(path, line, col,
                          f"variable {name!r} is not a declared argument{via}{hint}")
