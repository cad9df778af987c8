"""`promptops verify`: recompute the digest and check the full schema of a bundle."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from promptops.console import Console
from promptops.errors import BundleError
from promptops.pipeline.bundle import load_bundle
from promptops.pipeline.bundle_schema import BundleFile


def run(*, path: Path, console: Console) -> int:
    bundle = load_bundle(path)
    try:
        BundleFile.model_validate(bundle)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first["loc"])
        raise BundleError(
            f"{path}: does not match the bundle schema at {where}: {first['msg']}"
        ) from exc
    console.echo(f"{path}: ok ({bundle['digest']})")
    return 0
