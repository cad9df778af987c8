"""The package changed since ``--base REV`` but ``version`` did not.

Why: the same version would then serve different prompts, and clients and caches that
key on it serve stale text. Run ``promptops bump auto``. Runs only with ``--base``.

Measured on the real-prompt corpus: no finding in 78 prompts.

Fails::

    # base: version 1.2.0, prompt text "Hello"
    # head: version 1.2.0, prompt text "Hello there"

Passes::

    # head: version 1.2.1, prompt text "Hello there"
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from promptops.lint.problem import Hit

if TYPE_CHECKING:
    from promptops.lint.context import LintContext


CODE, NAME, LEVEL, NEEDS = "PO601", "version-not-bumped", "error", "base"


def check(ctx: LintContext) -> Iterator[Hit]:
    from promptops.pipeline.bundle import compile_bundle
    from promptops.versioning import content_digest

    head = compile_bundle(ctx.pkg)
    base = ctx.base
    if head["package"]["version"] != base["package"]["version"]:
        return
    if content_digest(head) != content_digest(base):
        line, col = ctx.pkg.manifest_file.position(("version",))
        yield Hit("promptops.yaml", line, col,
                  f"the package changed since {ctx.settings.base} but version is still "
                  f"{head['package']['version']}; run `promptops bump auto`")
