"""`promptops schema KIND`: JSON Schemas generated from the models, for editors and tools."""

from __future__ import annotations

import json

from promptops.commands.choices import SchemaKind
from promptops.console import Console
from promptops.scaffold import schema_for


def run(*, kind: SchemaKind, console: Console) -> int:
    console.echo(json.dumps(schema_for(kind), indent=2, ensure_ascii=False))
    return 0
