"""`promptops ls`: the prompts of a package as clients will list them."""

from __future__ import annotations

import json
from pathlib import Path

from promptops.commands._common import package_dir
from promptops.commands.choices import Format
from promptops.console import Console
from promptops.pipeline.build import Build


def run(*, path: Path | None, ref: str | None, fmt: Format, console: Console) -> int:
    with console.status("ls: loading the package"):  # a spinner on a terminal only
        bundle = Build(package_dir(path), ref).bundle
    prompts = bundle["prompts"]
    if fmt == "json":
        keys = ("name", "title", "description", "arguments")
        rows = [{k: p[k] for k in keys if k in p} for p in  # type: ignore[literal-required]
                prompts]
        console.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    for p in prompts:
        args = " ".join(
            f"{a['name']}" if a.get("required") else f"[{a['name']}]" for a in p["arguments"]
        )
        line = console.style(p["name"], bold=True) + (f" {args}" if args else "")
        if p.get("description"):
            line += f"  — {p['description']}"
        console.echo(line)
    return 0
