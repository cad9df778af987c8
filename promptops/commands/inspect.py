"""`promptops inspect`: what a bundle holds and where it came from."""

from __future__ import annotations

import json
from pathlib import Path

from promptops.commands.choices import Format
from promptops.console import Console
from promptops.pipeline.bundle import load_bundle


def run(*, path: Path, fmt: Format, console: Console) -> int:
    b = load_bundle(path)
    pkg, src = b["package"], b["source"]
    if fmt == "json":
        summary = {
            "package": pkg,
            "digest": b["digest"],
            "source": src,
            "prompts": [
                {"name": p["name"], "arguments": [a["name"] for a in p["arguments"]]}
                for p in b["prompts"]
            ],
            "templates": sorted(b["templates"]),
            "resources": sorted(b["resources"]),
        }
        console.echo(json.dumps(summary, indent=2, ensure_ascii=False))
        return 0
    commit = src["commit"] or "(working tree)"
    console.echo(f"{console.style(pkg['name'], bold=True)} {pkg['version']}")
    console.echo(f"digest:  {b['digest']}")
    console.echo(
        f"source:  {commit} tree {src['tree'] or '-'} path {src['path']}"
        + (" (dirty)" if src["dirty"] else "")
    )
    console.echo(
        f"prompts: {len(b['prompts'])}, templates: {len(b['templates'])}, "
        f"resources: {len(b['resources'])}"
    )
    for p in b["prompts"]:
        args = ", ".join(a["name"] + ("" if a.get("required") else "?") for a in p["arguments"])
        console.echo(f"  {p['name']}({args})")
    return 0
