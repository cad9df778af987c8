"""`promptops check`: the aggregate gate a user and CI run.

Today it loads and validates the package (every problem at once, positioned); lint,
test and build join it as they land.
"""

from __future__ import annotations

from pathlib import Path

from promptops.commands._common import package_dir
from promptops.console import info
from promptops.pipeline import package_at


def run(path: Path | None, ref: str | None) -> int:
    pkg = package_at(package_dir(path), ref)
    n = len(pkg.prompts)
    info(
        f"{pkg.manifest.name} {pkg.manifest.version}: {n} prompt{'s' if n != 1 else ''}, "
        f"{len(pkg.templates)} template file{'s' if len(pkg.templates) != 1 else ''}: ok"
    )
    return 0
