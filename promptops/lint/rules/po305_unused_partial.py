"""A template file under ``partials/`` or ``templates/`` is used by no prompt.

Why: dead text still gets reviewed, translated and "fixed"; delete it, or include it
where it was meant to go. When some prompt files do not load, a template whose path
appears in their text counts as used, so a broken prompt never makes its partials
look dead.

Measured on the real-prompt corpus: no finding in 78 prompts.

Fails::

    # partials/old_persona.j2, included nowhere

Passes::

    # partials/persona.j2, included by prompts/review.prompt.yaml
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from promptops.lint.problem import Hit
from promptops.lint.rules._common import TEMPLATE_SUFFIXES

if TYPE_CHECKING:
    from promptops.lint.context import LintContext


CODE, NAME, LEVEL, NEEDS = "PO305", "unused-partial", "warning", "package"
# Whether a partial is used depends on every prompt's includes.
SCOPE = "package"


def check(ctx: LintContext) -> Iterator[Hit]:
    used = set(ctx.pkg.templates)
    loaded = {p.path for p in ctx.pkg.prompts}
    unloaded = [ctx.text(p) or "" for p in ctx.files
                if p.startswith("prompts/") and p.endswith(".prompt.yaml") and p not in loaded]
    for path in ctx.files:
        top = path.split("/", 1)[0]
        if top in ("partials", "templates") and path.endswith(TEMPLATE_SUFFIXES) \
                and path not in used and not any(path in text for text in unloaded):
            yield Hit(path, 1, 1, f"template {path!r} is not used by any prompt")
