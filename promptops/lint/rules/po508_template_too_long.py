"""A template is longer than ``lint.maxTemplateChars`` (default 20,000 characters).

Why: a prompt nobody can read in one sitting cannot be reviewed, and it eats the
model's context on every request. Split it into partials or move reference material
into a resource. Configure the limit in ``promptops.yaml``::

    lint:
      maxTemplateChars: 50000

Measured on the real-prompt corpus: no finding in 78 prompts.

Fails (limit 10)::

    text: "This sentence is far too long."

Passes (limit 10)::

    text: "Short."
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from promptops.lint.problem import Hit
from promptops.lint.rules._common import prompts

if TYPE_CHECKING:
    from promptops.lint.context import LintContext


CODE, NAME, LEVEL, NEEDS = "PO508", "template-too-long", "warning", "package"


def check(ctx: LintContext) -> Iterator[Hit]:
    limit = ctx.settings.max_template_chars
    for prompt in prompts(ctx):
        for i, msg in enumerate(prompt.spec.messages):
            if msg.text is not None and len(msg.text) > limit:
                line, col = ctx.position(prompt.file, ("messages", i, "text"))
                yield Hit(prompt.path, line, col,
                          f"template is {len(msg.text)} characters, over the limit {limit}")
    for path, source in (ctx.package.templates.items() if ctx.package else ()):
        if len(source) > limit:
            yield Hit(path, 1, 1, f"template is {len(source)} characters, over the limit {limit}")
