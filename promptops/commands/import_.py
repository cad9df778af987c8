"""`promptops import SOURCE... [-o DIR] [--from FORMAT]`: other tools' prompts as a package.

Teams arrive with prompts written for VS Code, Prompty, Dotprompt, Claude Code, promptfoo
or LangChain. Each source file becomes one prompt (a promptfoo file of several ``---``
sections, several) in the package at DIR, created with a ``promptops.yaml`` when there is
none. The translation is the importers' (:mod:`promptops.interop.importers`): exact, or
with every loss named. The report says per file what was mapped and what could not be
expressed; exit 0 when everything is exact, 1 when anything was lost - the package is still
written and the losses are listed in ``CONVERSION.md`` beside it. The package is built at
the end, so what was written is known to load.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from promptops.commands.choices import Format
from promptops.console import Console
from promptops.errors import ExitCode, UsageError
from promptops.fsutil import atomic_write
from promptops.interop import ir
from promptops.interop.importers import IMPORTERS
from promptops.interop.package import dump, prompt_name, to_document
from promptops.scaffold import modeline, schema_files

FORMATS = tuple(IMPORTERS)
MAX_SOURCE_BYTES = 4 * 1024 * 1024  # one prompt file; a sibling (partial, sample) likewise
MAX_SIBLINGS = 200


@dataclass
class _Report:
    source: str
    ecosystem: str
    prompts: list[str] = field(default_factory=list)
    mapped: list[str] = field(default_factory=list)
    losses: list[ir.Loss] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def run(*, sources: list[Path], out: Path, source_format: str | None,
        fmt: Format, console: Console) -> int:
    if not sources:
        raise UsageError("import needs at least one SOURCE file")
    source_format = str(source_format) if source_format is not None else None
    if source_format is not None and source_format not in IMPORTERS:
        raise UsageError(f"--from {source_format!r}: expected one of {', '.join(FORMATS)}")
    manifest = out / "promptops.yaml"
    mode = _package_mode(manifest)
    reports: list[_Report] = []
    documents: dict[str, str] = {}
    with console.progress("import", "files") as start:  # a bar on a terminal only
        tick = start(len(sources))
        for path in sources:
            reports.append(_import(path, source_format, mode, documents, out))
            tick(1)
    out.mkdir(parents=True, exist_ok=True)
    if not manifest.exists():
        name = prompt_name(out.resolve().name.lower()).strip("._-") or "imported"
        atomic_write(manifest, (modeline("promptops.yaml", "manifest") + dump({
            "name": name if name[:1].isalnum() else "imported", "version": "0.1.0",
            "description": "Prompts imported by promptops import",
            "templates": {"whitespace": mode}})).encode())
    for rel, data in schema_files().items():  # the editor schemas the modelines name
        if not (out / rel).exists():
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            atomic_write(out / rel, data, root=out)
    for rel, text in documents.items():
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(target, (modeline(rel, "prompt") + text).encode(), root=out)
    lost = [r for r in reports if r.losses]
    if lost:
        atomic_write(out / "CONVERSION.md", _conversion(reports).encode(), root=out)
    from promptops.pipeline.build import Build

    with console.status("import: checking that the package loads"):
        Build(out).bundle  # noqa: B018 - proves the package loads (PackageError otherwise)
    _print(reports, fmt, console)
    return ExitCode.FAILED if lost else ExitCode.OK


def _package_mode(manifest: Path) -> str:
    """The whitespace mode of the package being added to (standalone for a new one)."""
    if not manifest.exists():
        return "standalone"
    from promptops.pipeline.yamlio.loader import YamlProblem, load_yaml

    try:
        data = load_yaml(str(manifest), manifest.read_bytes()).data
    except YamlProblem as exc:
        raise UsageError(str(exc.problem)) from exc
    templates = data.get("templates") if isinstance(data, dict) else None
    mode = templates.get("whitespace") if isinstance(templates, dict) else None
    return mode if mode in ("standalone", "jinja") else "standalone"


def detect(path: Path, text: str) -> str:
    """The format of a source file, from its name and, where names are ambiguous, content."""
    name = path.name.lower()
    if name.endswith(".prompty"):
        return "prompty"
    if name.endswith(".prompt.md"):
        return "vscode"
    if name.endswith(".prompt"):
        return "dotprompt"
    if name.endswith(".md"):  # VS Code reads only *.prompt.md: a plain .md is a command
        return "claude"
    if name.endswith((".txt", ".j2", ".njk", ".nunjucks")):
        return "promptfoo"
    if name.endswith(".json"):
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        return "langchain" if isinstance(data, dict) and "_type" in data else "promptfoo"
    if name.endswith((".yaml", ".yml")):
        if "_type:" in text:
            return "langchain"
        return "promptfoo"
    raise UsageError(f"{path}: cannot tell its format from the name; pass --from "
                     f"({', '.join(FORMATS)})")


def _read(path: Path) -> str:
    try:
        if path.stat().st_size > MAX_SOURCE_BYTES:
            raise UsageError(f"{path}: over {MAX_SOURCE_BYTES // (1024 * 1024)} MiB")
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: not UTF-8 text (byte {exc.start})") from exc
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from exc


def _siblings(path: Path) -> dict[str, str]:
    """The files beside a source that it may name (partials, samples, template files)."""
    out: dict[str, str] = {}
    folder = path.parent
    for candidate in sorted(folder.iterdir())[:MAX_SIBLINGS * 4]:
        if len(out) >= MAX_SIBLINGS:
            break
        if candidate == path or not candidate.is_file() or candidate.is_symlink():
            continue
        try:
            if candidate.stat().st_size <= MAX_SOURCE_BYTES:
                out[candidate.name] = candidate.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue  # not a text file a prompt could name
    return out


def _import(path: Path, forced: str | None, mode: str, documents: dict[str, str],
            out: Path) -> _Report:
    text = _read(path)
    ecosystem = forced or detect(path, text)
    prompts = IMPORTERS[ecosystem](str(path), text, _siblings(path))  # InteropError: exit 1
    report = _Report(str(path), ecosystem)
    for prompt in prompts:
        name = prompt_name(prompt.name)
        rel = f"prompts/{name}.prompt.yaml"
        if rel in documents or (out / rel).exists():
            raise UsageError(f"{path}: prompt {name!r} already exists in {out} ({rel}); "
                             "import it into another folder or rename the source")
        doc, losses = to_document(prompt, mode)
        if name != prompt.name:
            doc = {"name": name, **doc}
            report.notes.append(f"name {prompt.name!r} is not an MCP-safe prompt name: "
                                f"written as {name!r}")
        documents[rel] = dump(doc)
        report.prompts.append(name)
        report.mapped.extend(f"{name}: {k}" for k in doc if k not in ("messages",))
        report.losses.extend((*prompt.losses, *losses))
        report.notes.extend(prompt.notes)
    return report


def _conversion(reports: list[_Report]) -> str:
    lines = ["# Conversion report", "",
             "Written by `promptops import`. Each source below lost something in the "
             "conversion; the package holds the nearest form, and the reason is given.", ""]
    for r in reports:
        if not r.losses:
            continue
        lines += [f"## {r.source} ({r.ecosystem})", "",
                  f"Prompts: {', '.join(r.prompts)}", ""]
        lines += [f"- {loss}" for loss in r.losses]
        lines.append("")
    return "\n".join(lines)


def _print(reports: list[_Report], fmt: Format, console: Console) -> None:
    if fmt == "json":
        console.echo(json.dumps([{
            "source": r.source, "from": r.ecosystem, "prompts": r.prompts,
            "exact": not r.losses, "mapped": r.mapped, "notes": r.notes,
            "losses": [{"what": x.what, "reason": x.reason, "line": x.line}
                       for x in r.losses]} for r in reports], indent=2, ensure_ascii=False))
        return
    for r in reports:
        state = console.style("lossy", fg="yellow") if r.losses \
            else console.style("exact", fg="green")
        console.echo(f"{console.style(r.source, bold=True)} ({r.ecosystem}) -> "
                     f"{', '.join(r.prompts)}: {state}")
        for item in r.mapped:
            console.echo(f"  mapped {item}")
        for note in r.notes:
            console.echo(f"  note: {note}")
        for loss in r.losses:
            console.echo(f"  lost: {loss}")
