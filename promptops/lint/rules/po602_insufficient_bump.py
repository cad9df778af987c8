"""The version was bumped less than the changes since ``--base REV`` require.

Why: removing a prompt or argument, adding a required argument or narrowing an
``enum`` breaks existing callers, which SemVer promises only a major version does
(0.x: a minor). Runs only with ``--base``; an unchanged version is PO601's.

Fails::

    # base: 1.2.0 with argument `tone`; head: 1.3.0 without it

Passes::

    # base: 1.2.0 with argument `tone`; head: 2.0.0 without it
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from promptops.lint.problem import Hit

CODE, NAME, LEVEL, NEEDS = "PO602", "insufficient-bump", "error", "base"


def check(ctx: Any) -> Iterator[Hit]:
    from promptops.pipeline.bundle import compile_bundle
    from promptops.versioning import by_level, diff_bundles, required_bump
    from promptops.versioning.semver import Version, satisfies

    head, base = compile_bundle(ctx.package), ctx.base_bundle
    old = Version.parse(base["package"]["version"])
    new = Version.parse(head["package"]["version"])
    if old == new:
        return
    changes = diff_bundles(base, head)
    needed = required_bump(changes)
    if needed is not None and not satisfies(old, new, needed):
        line, col = ctx.package.manifest_file.position(("version",))
        worst = by_level(changes)[0]
        yield Hit("promptops.yaml", line, col,
                  f"{old} -> {new} is not enough: the changes since {ctx.settings.base} need "
                  f"a {needed.value} bump ({worst.summary()})")
