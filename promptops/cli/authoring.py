"""Commands an author runs on a package: init, render, import, export, ls, check, lint,
rules, test, schema and install. Registration order is the order ``--help`` lists them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from promptops.cli.base import FormatOpt, PathArg, RefOpt, command, run
from promptops.commands.choices import (
    Client,
    ExportTarget,
    Format,
    ImportFormat,
    LintFormat,
    SchemaKind,
)
from promptops.error_handler import handle


@command()
def init(
    ctx: typer.Context,
    directory: Annotated[
        Path, typer.Argument(metavar="DIR", help="Folder to create the package in")
    ] = Path("."),
    commit: Annotated[
        bool, typer.Option("--commit", help="Inside an existing repository, commit what init wrote")
    ] = False,
) -> None:
    """Scaffold a starter package (prompts, partials, tests, CI workflow)."""
    from promptops.commands import init as cmd

    run(ctx, cmd.run, directory=directory, commit=commit)


@command()
def render(
    ctx: typer.Context,
    prompt: Annotated[str, typer.Argument(metavar="PROMPT", help="Prompt name")],
    arg: Annotated[
        list[str] | None,
        typer.Option("-a", "--arg", metavar="NAME=VALUE", help="An argument (repeatable)"),
    ] = None,
    args_file: Annotated[
        Path | None,
        typer.Option("--args-file", metavar="FILE", help="JSON or YAML file of arguments"),
    ] = None,
    path: Annotated[
        Path | None, typer.Option("--path", "-p", metavar="DIR", help="Package folder")
    ] = None,
    ref: RefOpt = None,
    fmt: FormatOpt = Format.text,
    sample: Annotated[str | None, typer.Option(
        "--sample", help="Start from the prompt's named sample arguments", metavar="NAME")
    ] = None,
) -> None:
    """Render a prompt with arguments, exactly as `serve` would answer prompts/get."""
    from promptops.commands import render as cmd

    run(ctx, cmd.run, prompt=prompt, pairs=arg or [], args_file=args_file, path=path, ref=ref,
         fmt=fmt, sample=sample)


@command("import")
def import_(
    ctx: typer.Context,
    sources: Annotated[list[Path], typer.Argument(
        metavar="PATH...", help="Prompt files or folders of another tool (folders are read "
        "recursively; - reads a list of paths from stdin)")],
    out: Annotated[Path, typer.Option("-o", "--out", metavar="DIR",
                                      help="Package folder to write or add to")] = Path("."),
    source_format: Annotated[
        ImportFormat | None,
        typer.Option("--from", metavar="FORMAT", help="Read every file as this format: "
                     "prompty, dotprompt, vscode, claude, promptfoo or langchain (default: "
                     "detected per file from its name and content)"),
    ] = None,
    commit: Annotated[bool, typer.Option(
        "--commit", help="Commit what is written (git init DIR when it is in no repository)")
    ] = False,
    fmt: FormatOpt = Format.text,
) -> None:
    """Import other tools' prompt files into a package; exit 1 if any is lossy or refused.

    Each file ends as imported exact, imported with its losses named, or refused with the
    reason; the package is written only as a whole that builds, or not at all.
    """
    from promptops.commands import import_ as cmd

    run(ctx, cmd.run, sources=sources, out=out, source_format=source_format, commit=commit,
         fmt=fmt)


@command()
def export(
    ctx: typer.Context,
    target: Annotated[ExportTarget, typer.Option(
        "--to", metavar="TOOL", help="Write for: vscode, claude, prompty or dotprompt")],
    prompts: Annotated[list[str] | None, typer.Argument(
        metavar="[PROMPT]...", help="Prompts to export (default: all)")] = None,
    out: Annotated[Path, typer.Option("-o", "--out", metavar="DIR",
                                      help="Folder to write into")] = Path("."),
    path: Annotated[
        Path | None, typer.Option("--path", "-p", metavar="DIR", help="Package folder")
    ] = None,
    ref: RefOpt = None,
    fmt: FormatOpt = Format.text,
) -> None:
    """Write prompts as files other tools load; exit 1 if a target cannot express something."""
    from promptops.commands import export as cmd

    run(ctx, cmd.run, target=target, out=out, prompts=prompts or [], path=path, ref=ref,
         fmt=fmt)


@command("ls")
def ls_(ctx: typer.Context, path: PathArg = None, ref: RefOpt = None,
        fmt: FormatOpt = Format.text) -> None:
    """List the prompts of a package with their arguments."""
    from promptops.commands import ls as cmd

    run(ctx, cmd.run, path=path, ref=ref, fmt=fmt)


@command()
def check(ctx: typer.Context, path: PathArg = None, ref: RefOpt = None) -> None:
    """Validate, lint and test a package: the gate a user and CI run."""
    from promptops.commands import check as cmd

    run(ctx, cmd.run, path=path, ref=ref)


@command()
def lint(
    ctx: typer.Context,
    path: PathArg = None,
    ref: RefOpt = None,
    fmt: Annotated[
        LintFormat,
        typer.Option("--format", metavar="FORMAT", help="text, json, github or sarif"),
    ] = LintFormat.text,
    select: Annotated[
        list[str] | None,
        typer.Option("--select", metavar="CODE", help="Only this rule, by code or name "
                     "(repeatable)"),
    ] = None,
    ignore: Annotated[
        list[str] | None,
        typer.Option("--ignore", metavar="CODE", help="Skip this rule (repeatable)"),
    ] = None,
    fix: Annotated[bool, typer.Option(
        "--fix", help="Apply the fixes proven not to change any rendered output")] = False,
    diff: Annotated[bool, typer.Option("--diff", help="Show the fixes, write nothing")] = False,
    unsafe_fixes: Annotated[bool, typer.Option(
        "--unsafe-fixes", help="With --fix/--diff: also the fixes that change rendered output "
        "(the rendered difference is shown)")] = False,
    strict: Annotated[bool, typer.Option("--strict", help="Warnings fail too")] = False,
    base: Annotated[
        str | None,
        typer.Option("--base", metavar="REV", help="Check versioning against this revision"),
    ] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Ignore cached results")] = False,
    watch: Annotated[bool, typer.Option(
        "--watch", help="Lint again after every save, until Ctrl-C")] = False,
) -> None:
    """Check prompts for broken, unsafe and unreviewable content."""
    from promptops.commands import lint as cmd

    opts = cmd.Options(ref=ref, fmt=fmt, select=tuple(select or ()), ignore=tuple(ignore or ()),
                       fix=fix, diff=diff, unsafe_fixes=unsafe_fixes, strict=strict, base=base,
                       use_cache=not no_cache)
    if watch:
        run(ctx, cmd.watch, path=path, opts=opts, on_error=handle)
    else:
        run(ctx, cmd.run, path=path, opts=opts)


@command()
def rules(
    ctx: typer.Context,
    rule: Annotated[str | None, typer.Argument(metavar="CODE", help="A rule code or name")] = None,
) -> None:
    """List the lint rules, or show one rule's documentation."""
    from promptops.commands import rules as cmd

    run(ctx, cmd.run, key=rule)


@command("test")
def test_(
    ctx: typer.Context,
    path: PathArg = None,
    ref: Annotated[
        str | None,
        typer.Option("--ref", metavar="REV", help="Test this git revision (snapshots read from "
                     "it)"),
    ] = None,
    k: Annotated[
        list[str] | None,
        typer.Option("-k", metavar="PATTERN",
                     help="Only cases whose prompt::name contains this (or glob)"),
    ] = None,
    update_snapshots: Annotated[
        bool, typer.Option("--update-snapshots", help="Write new/changed, remove obsolete")
    ] = False,
    junit_xml: Annotated[
        Path | None,
        typer.Option("--junit-xml", metavar="FILE", help="Write a JUnit XML report here"),
    ] = None,
    fmt: FormatOpt = Format.text,
    jobs: Annotated[
        int | None, typer.Option("-j", "--jobs", metavar="N", help="Processes (default: auto)")
    ] = None,
    watch: Annotated[bool, typer.Option(
        "--watch", help="Run again after every save (the cases it touched), until Ctrl-C")
    ] = False,
) -> None:
    """Run the package's deterministic prompt tests (tests/**/*.test.yaml + smoke cases)."""
    from promptops.commands import test as cmd

    if watch:
        run(ctx, cmd.watch, path=path, patterns=k or [], fmt=fmt, jobs=jobs, on_error=handle,
             fixed=ref is not None or update_snapshots or junit_xml is not None)
    else:
        run(ctx, cmd.run, path=path, ref=ref, patterns=k or [], update=update_snapshots,
             junit=junit_xml, fmt=fmt, jobs=jobs)


@command()
def schema(
    ctx: typer.Context,
    kind: Annotated[
        SchemaKind, typer.Argument(metavar="KIND", help="manifest, prompt, bundle or test")
    ],
) -> None:
    """Print the JSON Schema of a file kind (for editors and tools)."""
    from promptops.commands import schema as cmd

    run(ctx, cmd.run, kind=kind)


@command()
def install(
    ctx: typer.Context,
    client: Annotated[Client, typer.Argument(metavar="CLIENT",
                                             help="claude-desktop, claude-code, vscode, "
                                                  "cursor, gemini, goose, copilot or json")],
    path: PathArg = None,
    name: Annotated[
        str | None, typer.Option("--name", metavar="NAME",
                                 help="Server name (default: the package name)")
    ] = None,
    scope: Annotated[
        str | None,
        typer.Option("--scope", metavar="SCOPE",
                     help="claude-code: local (default), user or project; vscode and cursor: "
                          "user (default) or workspace; gemini and copilot: user (default) "
                          "or project"),
    ] = None,
    config: Annotated[
        Path | None, typer.Option("--config", metavar="FILE",
                                  help="Write this file instead of the client's own")
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Replace a server of the same name")
    ] = False,
    print_only: Annotated[
        bool, typer.Option("--print", help="Show the change to the file; write nothing")
    ] = False,
    worktree: Annotated[
        bool, typer.Option("--worktree", help="Serve the working tree (serve --worktree)")
    ] = False,
) -> None:
    """Add this package to an MCP client's config (absolute paths, or portable ones in a
    project or workspace file a team commits)."""
    from promptops.commands import install as cmd

    run(ctx, cmd.run, client=client, path=path, name=name, scope=scope,
         config=config, force=force, print_only=print_only, worktree=worktree)
