"""`promptops export --to vscode|claude|prompty|dotprompt [-o DIR] [PROMPT...]`.

One package also feeds the clients that do not speak MCP: each prompt is written as the
file its target loads (``.github/prompts/<name>.prompt.md``, ``.claude/commands/<name>.md``,
``<name>.prompty``, ``<name>.prompt``) under DIR. The exporters
(:mod:`promptops.interop.exporters`) write the best file the target can hold and say what it
cannot express (a system role in a one-message format, a package file attached as a file
reference...), or refuse a prompt the target would not run as the package does (Jinja logic
in a plain-substitution format): the report lists it per prompt and the command exits 1.
Exact exports round-trip: ``promptops import`` of the written file renders as the package
does, and every written file substitutes as the target documents to what ``render`` gives
(tests/interop).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from promptops.commands._common import package_dir
from promptops.commands.choices import Format
from promptops.console import Console
from promptops.errors import ExitCode, UnsafeWrite, UsageError, WriteError
from promptops.fsutil import write_below
from promptops.interop.exporters import EXPORTERS
from promptops.interop.ir import Loss
from promptops.interop.package import from_bundle
from promptops.pipeline.build import Build

TARGETS = tuple(EXPORTERS)
# Where each target's file for a prompt goes (for a refused prompt: what an earlier export
# may have left there, which the tool would still load).
_FILE = {"vscode": ".github/prompts/{}.prompt.md", "claude": ".claude/commands/{}.md",
         "prompty": "{}.prompty", "dotprompt": "{}.prompt"}


def run(*, target: str, out: Path, prompts: list[str], path: Path | None, ref: str | None,
        fmt: Format, console: Console) -> int:
    target = str(target)
    if target not in EXPORTERS:
        raise UsageError(f"--to {target!r}: expected one of {', '.join(TARGETS)}")
    with console.status("export: loading the package"):
        bundle = Build(package_dir(path), ref).bundle
    every = {p.name: p for p in from_bundle(bundle)}
    unknown = [n for n in prompts if n not in every]
    if unknown:
        raise UsageError(f"unknown prompt {unknown[0]!r} (the package has: "
                         f"{', '.join(every) or 'none'})")
    chosen = [every[n] for n in prompts] if prompts else list(every.values())
    report: list[tuple[str, list[str], list[Loss]]] = []
    lossy = False
    with console.progress("export", "prompts") as start:  # a bar on a terminal only
        tick = start(len(chosen))
        for prompt in chosen:
            files, losses = EXPORTERS[target](prompt)
            losses = [*prompt.losses, *losses]
            lossy = lossy or bool(losses)
            for rel, text in files.items():
                write(out, rel, text.encode("utf-8") if isinstance(text, str) else text)
            left = _FILE[target].format(prompt.name)
            if not files and os.path.lexists(out / left):
                losses.append(Loss(left, "an earlier export's file is left as it was, and the "
                                   "tool still loads it: remove it"))
            report.append((prompt.name, list(files), losses))
            tick(1)
    if fmt == "json":
        console.echo(json.dumps([{"prompt": name, "files": files, "exact": not losses,
                                  "refused": not files,
                          "losses": [{"what": x.what, "reason": x.reason} for x in losses]}
                         for name, files, losses in report], indent=2, ensure_ascii=False))
    else:
        for name, written, losses in report:
            if not written:
                console.echo(f"{console.style(name, bold=True)}: "
                             f"{console.style('refused', fg='red')}, nothing written")
            else:
                state = console.style("lossy", fg="yellow") if losses \
                    else console.style("exact", fg="green")
                where = ", ".join(str(out / f) for f in written)
                console.echo(f"{console.style(name, bold=True)} -> {where}: {state}")
            for loss in losses:
                console.echo(f"  cannot express: {loss}")
    return ExitCode.FAILED if lossy else ExitCode.OK


def write(out: Path, rel: str, data: bytes) -> None:
    """Every file export writes comes through here: atomically, and confined to ``out``.

    A repository can commit ``.claude/commands -> ../../victim``; export run in its checkout
    would write wherever that points. :func:`promptops.fsutil.write_below` follows no symlink
    below ``out`` (folders on the way or the file itself): the export stops, exit 1, naming
    the link (SECURITY.md, invariant 1 of issue 23).
    """
    try:
        write_below(out, rel, data)
    except UnsafeWrite as exc:
        raise WriteError(out / rel, f"{exc.link} is a symlink; export never writes through a "
                         f"symlink below the output folder {out} (it could point anywhere: "
                         "replace it with a real folder, or export with -o elsewhere)") from exc
