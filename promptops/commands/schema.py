"""`promptops schema KIND`: JSON Schemas generated from the models, for editors and tools."""

from __future__ import annotations

import json
from typing import Any

from promptops.commands.choices import SchemaKind
from promptops.console import Console


def schema_for(kind: str) -> dict[str, object]:
    if kind == "bundle":
        from promptops.pipeline.bundle_schema import BundleFile

        model: Any = BundleFile
    elif kind == "test":
        from promptops.testing.model import TestFile

        model = TestFile
    else:
        from promptops.pipeline.model import Manifest, PromptFile

        model = Manifest if kind == "manifest" else PromptFile
    out: dict[str, object] = {"$schema": "https://json-schema.org/draft/2020-12/schema"}
    out.update(model.model_json_schema())
    return out


def run(*, kind: SchemaKind, console: Console) -> int:
    console.echo(json.dumps(schema_for(kind), indent=2, ensure_ascii=False))
    return 0
