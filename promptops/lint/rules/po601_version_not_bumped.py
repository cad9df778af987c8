"""The package changed since ``--base REV`` but ``version`` did not.

Why: the same version would then serve different prompts, and clients and caches that
key on it serve stale text. Run ``promptops bump auto``. Runs only with ``--base``.

Fails::

    # base: version 1.2.0, prompt text "Hello"
    # head: version 1.2.0, prompt text "Hello there"

Passes::

    # head: version 1.2.1, prompt text "Hello there"
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from promptops.lint.problem import Hit

CODE, NAME, LEVEL, NEEDS = "PO601", "version-not-bumped", "error", "base"


def check(ctx: Any) -> Iterator[Hit]:
    from promptops.pipeline.bundle import compile_bundle
    from promptops.versioning import content_digest

    head = compile_bundle(ctx.package)
    base = ctx.base_bundle
    if head["package"]["version"] != base["package"]["version"]:
        return
    if content_digest(head) != content_digest(base):
        line, col = ctx.package.manifest_file.position(("version",))
        yield Hit("promptops.yaml", line, col,
                  f"the package changed since {ctx.settings.base} but version is still "
                  f"{head['package']['version']}; run `promptops bump auto`")
