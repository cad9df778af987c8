"""`promptops render`: what a client would receive for prompts/get, on the terminal."""

from __future__ import annotations

import json
from pathlib import Path

from promptops.commands._common import package_dir, parse_arguments, refuse_contradictions
from promptops.commands.choices import Format
from promptops.console import Console
from promptops.errors import UsageError
from promptops.pipeline.build import Build
from promptops.render import transcript
from promptops.render.renderer import Renderer


def run(
    *,
    prompt: str,
    pairs: list[str],
    args_file: Path | None,
    path: Path | None,
    ref: str | None,
    fmt: Format,
    console: Console,
    sample: str | None = None,
) -> int:
    arguments = parse_arguments(pairs, args_file)
    build = Build(package_dir(path), ref)
    refuse_contradictions(build, console)  # serve's verdict, before rendering a bad default
    bundle = build.bundle
    if sample is not None:  # the prompt's named argument set, under -a / --args-file
        spec = next((p for p in bundle["prompts"] if p["name"] == prompt), None)
        samples = {s["name"]: s["arguments"] for s in (spec.get("samples", []) if spec else [])}
        if sample not in samples:
            known = ", ".join(samples) or "none"
            raise UsageError(f"prompt {prompt!r} has no sample {sample!r} (samples: {known})")
        arguments = {**samples[sample], **arguments}
    result = Renderer(bundle).get(prompt, arguments)  # a RenderError says what is wrong
    if fmt == "json":
        console.echo(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        console.echo(transcript.terminal(result, lambda head: console.style(head, bold=True)))
    return 0
